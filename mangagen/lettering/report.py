"""Where the lettering put each thing it drew on a panel, as `letter()` reports it when
asked: so that an editor shows each handle on its balloon, and says when a balloon or a
sound effect had to be moved in or made smaller to stay inside the panel."""

from __future__ import annotations

from dataclasses import dataclass

CAPTION, BALLOON, NARRATION, SFX = "caption", "balloon", "narration", "sfx"


@dataclass(frozen=True)
class Placed:
    """One thing lettered: a caption, a dialogue line's balloon or narration box, or a
    sound effect; its box and its tail's end in pixels of the lettered picture."""

    kind: str
    number: int  # the line's position in the panel's dialogue, or the sound effect's
    box: tuple[float, float, float, float]  # x0, y0, x1, y1
    tail: tuple[float, float] | None = None  # where its tail ends (a point or near a face)
    auto: bool = True  # placed by the lettering (not where the person put it)
    moved_in: bool = False  # moved from where it was put, to stay inside the panel
    shrunk: bool = False  # smaller than asked for (type or letters), to fit

    def as_fractions(self, width: int, height: int) -> dict:
        """As the API says it (docs/api.md, "Lettering you direct"): fractions 0–1 of
        the picture, from its top left, rounded to 1/1000."""

        def fx(x: float) -> float:
            return round(min(1.0, max(0.0, x / width)), 3)

        def fy(y: float) -> float:
            return round(min(1.0, max(0.0, y / height)), 3)

        x0, y0, x1, y1 = self.box
        return {
            "kind": self.kind,
            "box": {"x0": fx(x0), "y0": fy(y0), "x1": fx(x1), "y1": fy(y1)},
            "centre": {"x": fx((x0 + x1) / 2), "y": fy((y0 + y1) / 2)},
            "tail": {"x": fx(self.tail[0]), "y": fy(self.tail[1])} if self.tail else None,
            "auto": self.auto,
            "moved_in": self.moved_in,
            "shrunk": self.shrunk,
        }
