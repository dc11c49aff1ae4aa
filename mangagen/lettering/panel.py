"""What one panel's lettering is made from: its dialogue lines (each with its balloon's
style and, where the person put it, its place and tail), its caption, its sound effects,
its language, and where the faces are (as the renderer reported them, or guessed from
the shot and the blocking)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .languages import ORIGINAL_DEFAULT
from .styles import BalloonStyle
from .text import one_line

# Where a renderer that reports no faces is assumed to have put them, by shot:
# (y of the faces as a fraction of the height, radius as a fraction of the height).
SHOT_ZONES = {
    "establishing": (0.7, 0.05), "wide": (0.66, 0.07), "medium": (0.62, 0.15),
    "close-up": (0.6, 0.3), "extreme-close-up": (0.5, 0.25), "action": (0.45, 0.1),
}  # fmt: skip


# Where a character the blocking places stands, as a fraction of the width, when the
# renderer reported no faces (the procedural renderer's figures stand there too).
BLOCKING_X = {"left": 0.22, "center": 0.5, "right": 0.78}


# A dialogue line's balloon: how it is drawn (docs/api.md, "Lettering you direct").
SPEECH, THOUGHT, SHOUT, WHISPER = (
    BalloonStyle.SPEECH,
    BalloonStyle.THOUGHT,
    BalloonStyle.SHOUT,
    BalloonStyle.WHISPER,
)
STYLES = tuple(BalloonStyle.values)
SFX_SIZE = 0.14  # a sound effect's letters when no size is given: of the shorter side


@dataclass(frozen=True)
class Line:
    """A dialogue line as lettered: who says it, what, its balloon's style, and where the
    person put it (`place`, the balloon's centre, and `tail`, where its tail aims: fractions
    of the panel) or None for the lettering's own choice."""

    speaker: str
    text: str
    style: str = SPEECH
    place: tuple[float, float] | None = None
    tail: tuple[float, float] | None = None
    number: int = -1  # its position in the panel's dialogue as given (-1: a caption)

    @classmethod
    def of(cls, data: dict, number: int = -1) -> Line:
        place = data.get("place") or None
        tail = (place or {}).get("tail") or None
        return cls(
            speaker=data.get("speaker", ""),
            text=one_line(data.get("text") or ""),
            style=data.get("style") if data.get("style") in STYLES else SPEECH,
            place=(_unit(place["x"]), _unit(place["y"])) if place else None,
            tail=(_unit(tail["x"]), _unit(tail["y"])) if tail else None,
            number=number,
        )


@dataclass(frozen=True)
class SoundEffect:
    """Art text lettered into the picture: centre (fractions of the panel), the height of
    its letters (a fraction of the panel's shorter side), and its angle in degrees."""

    text: str
    x: float
    y: float
    size: float = SFX_SIZE
    angle: float = 0.0
    number: int = -1  # its position in the panel's list as given

    @classmethod
    def of(cls, data: dict, number: int = -1) -> SoundEffect:
        return cls(
            text=one_line(data.get("text") or ""),
            x=_unit(data.get("x", 0.5)),
            y=_unit(data.get("y", 0.5)),
            size=min(0.5, max(0.02, float(data.get("size") or SFX_SIZE))),
            angle=float(data.get("angle") or 0.0),
            number=number,
        )


def _unit(value) -> float:
    return min(1.0, max(0.0, float(value)))


@dataclass(frozen=True)
class Speaker:
    """A face: centre and radius as fractions of the panel's width (x) and height (y, r)."""

    x: float
    y: float
    r: float


@dataclass(frozen=True)
class Letterable:
    """What the lettering of one panel is made from: its current text and where faces are."""

    dialogue: tuple[Line, ...] = ()  # in reading order
    caption: str = ""
    shot: str = "medium"
    characters: tuple[str, ...] = ()
    faces: dict[str, Speaker] = field(default_factory=dict)
    blocking: dict[str, str] = field(default_factory=dict)  # name -> left | center | right
    language: str = ORIGINAL_DEFAULT  # what the text is written in: how it is set
    sfx: tuple[SoundEffect, ...] = ()

    @classmethod
    def of(
        cls,
        *,
        dialogue,
        caption: str,
        shot: str,
        characters,
        faces: dict | None,
        blocking: dict | None = None,
        language: str = ORIGINAL_DEFAULT,
        sfx=(),
    ):
        """From the panel's JSON: dialogue lines `{"speaker", "text", "style"?, "place"?}`,
        sound effects `{"text", "x", "y", "size"?, "angle"?}`."""
        return cls(
            dialogue=tuple(
                Line.of(d, n) for n, d in enumerate(dialogue) if one_line(d.get("text") or "")
            ),
            sfx=tuple(
                SoundEffect.of(e, n)
                for n, e in enumerate(sfx or ())
                if one_line(e.get("text") or "")
            ),
            caption=one_line(caption or ""),
            shot=shot,
            characters=tuple(characters),
            faces={name: Speaker(*xyr) for name, xyr in (faces or {}).items()},
            blocking=dict(blocking or {}),
            language=language,
        )

    def speakers(self) -> dict[str, Speaker]:
        """Faces as reported, else guessed from the shot: where the blocking puts each
        character, the others left to right."""
        if self.faces:
            return dict(self.faces)
        y, r = SHOT_ZONES.get(self.shot, SHOT_ZONES["medium"])
        n = len(self.characters)
        return {
            name: Speaker(BLOCKING_X.get(self.blocking.get(name, ""), (i + 1) / (n + 1)), y, r)
            for i, name in enumerate(self.characters)
        }
