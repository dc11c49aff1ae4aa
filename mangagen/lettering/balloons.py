"""Balloons, tails, narration boxes and captions, placed where they cover the least of the picture.

`letter()` takes a panel's art and its current text and returns the art with
the lettering drawn over it. Placement, for each item in reading order:
every position on a grid is scored by how much of a face it covers (the
renderer's own face positions when it reported them, otherwise zones guessed
from the shot), how much ink it hides, how far it sits from its speaker, and
whether it keeps reading order (right to left, or left to right, then down);
overlapping an earlier balloon is refused. Text is fitted to its balloon by
shrinking the type within bounds. The panel's language decides the setting:
Japanese lines are set vertically, every other language horizontally (a
line of Chinese or Japanese set horizontally breaks between characters, and
never before a closing mark).

A person may direct it (docs/api.md, "Lettering you direct"): a line's
balloon style (a speech oval, a thought cloud with a trail of bubbles, a
shout's spiky burst with bolder type, a whisper's dashed outline with
smaller, lighter type) and its place (the balloon's centre and where its tail
ends, fractions of the panel), and a panel's sound effects (large outlined
art text at a point, turned, in columns in Japanese). A placed balloon is
fitted around its centre and kept inside the panel; the others are placed
around it as above.
"""

from __future__ import annotations

import math
import random
import re
import zlib
from dataclasses import dataclass, field

from PIL import Image, ImageDraw, ImageFont

from .fonts import cjk_font, face_for, title_face
from .languages import ORIGINAL_DEFAULT, is_vertical

JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]")
# Scripts written without spaces: a line may break between any two characters.
UNSPACED = "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
TOKEN = re.compile(rf"\s+|[{UNSPACED}]|[^\s{UNSPACED}]+")
NO_LINE_START = set("、。，．！？」』）〕】〉》・ー…!?,.;:)")
NO_LINE_END = set("「『（〔【〈《(")
# Line and paragraph breaks and other control characters: Pillow's text layout
# refuses a line break in what it measures, and the rest draw as boxes or fail.
BREAKS = re.compile(r"[\s\x00-\x1f\x7f-\x9f]+")
VERTICAL_FORMS = {"「": "﹁", "」": "﹂", "『": "﹃", "』": "﹄", "…": "︙", "（": "︵", "）": "︶"}
ROTATED = set("ー～〜―-")
HANGING = set("、。，．")
INK, PAPER = (0, 0, 0), (255, 255, 255)
BURST_REACH = 1.3  # how far a shout's spikes reach past the text's ellipse
CLOUD_REACH = 1.18  # how far a thought's puffs stand out from it

# Where a renderer that reports no faces is assumed to have put them, by shot:
# (y of the faces as a fraction of the height, radius as a fraction of the height).
SHOT_ZONES = {
    "establishing": (0.7, 0.05),
    "wide": (0.66, 0.07),
    "medium": (0.62, 0.15),
    "close-up": (0.6, 0.3),
    "extreme-close-up": (0.5, 0.25),
    "action": (0.45, 0.1),
}


# Where a character the blocking places stands, as a fraction of the width, when the
# renderer reported no faces (the procedural renderer's figures stand there too).
BLOCKING_X = {"left": 0.22, "center": 0.5, "right": 0.78}


@dataclass(frozen=True)
class Speaker:
    """A face: centre and radius as fractions of the panel's width (x) and height (y, r)."""

    x: float
    y: float
    r: float


def one_line(text: str) -> str:
    """`text` as lettering draws it: every run of whitespace, line breaks and
    control characters one space (a balloon wraps its text itself)."""
    return BREAKS.sub(" ", text).strip()


# A dialogue line's balloon: how it is drawn (docs/api.md, "Lettering you direct").
SPEECH, THOUGHT, SHOUT, WHISPER = "speech", "thought", "shout", "whisper"
STYLES = (SPEECH, THOUGHT, SHOUT, WHISPER)
WHISPER_INK = (96, 96, 96)  # a whisper's type: lighter than the rest
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

    @classmethod
    def of(cls, data: dict) -> Line:
        place = data.get("place") or None
        tail = (place or {}).get("tail") or None
        return cls(
            speaker=data.get("speaker", ""),
            text=one_line(data.get("text") or ""),
            style=data.get("style") if data.get("style") in STYLES else SPEECH,
            place=(_unit(place["x"]), _unit(place["y"])) if place else None,
            tail=(_unit(tail["x"]), _unit(tail["y"])) if tail else None,
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

    @classmethod
    def of(cls, data: dict) -> SoundEffect:
        return cls(
            text=one_line(data.get("text") or ""),
            x=_unit(data.get("x", 0.5)),
            y=_unit(data.get("y", 0.5)),
            size=min(0.5, max(0.02, float(data.get("size") or SFX_SIZE))),
            angle=float(data.get("angle") or 0.0),
        )


def _unit(value) -> float:
    return min(1.0, max(0.0, float(value)))


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
            dialogue=tuple(Line.of(d) for d in dialogue if one_line(d.get("text") or "")),
            sfx=tuple(SoundEffect.of(e) for e in sfx or () if one_line(e.get("text") or "")),
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


@dataclass
class _Block:
    lines: list[str]
    font: ImageFont.FreeTypeFont
    vertical: bool
    text_w: float
    text_h: float


def letter(
    image: Image.Image, *, panel: Letterable, direction: str = "rtl", type_size: int | None = None
) -> Image.Image:
    """The art with the panel's lettering drawn over it (a new RGB image).

    `type_size` (pixels) keeps the lettering one size across a page; without
    it the type is sized from the panel.
    """
    out = image.convert("RGB")
    vertical = is_vertical(panel.language)
    for effect in panel.sfx:  # art text first: balloons go over it, and avoid its ink
        _sound_effect(out, effect, vertical)
    items: list[_Item] = []
    if panel.caption.strip():
        items.append(_Item("caption", Line("", panel.caption.strip())))
    speakers = panel.speakers()
    for line in panel.dialogue:
        # A styled line, or one with a tail aimed, is a balloon whoever says it; a plain
        # one with no speaker in the panel is narration, boxed.
        balloon = line.speaker in speakers or line.style != SPEECH or line.tail is not None
        items.append(_Item("balloon" if balloon else "narration", line))
    if not items:
        return out
    _Letterer(out, speakers, direction, len(items), type_size, vertical).place_all(items)
    return out


@dataclass(frozen=True)
class _Item:
    kind: str  # caption | balloon | narration
    line: Line

    @property
    def style(self) -> str:
        return self.line.style if self.kind == "balloon" else SPEECH


class _Letterer:
    def __init__(
        self, image, speakers: dict[str, Speaker], direction: str, count, type_size, vertical
    ):
        self.image = image
        self.vertical = vertical  # the language sets its own script in columns (Japanese)
        self.w, self.h = image.size
        self.draw = ImageDraw.Draw(image)
        self.rtl = direction == "rtl"
        self.faces = {
            name: (s.x * self.w, s.y * self.h, max(4.0, s.r * self.h))
            for name, s in speakers.items()
        }
        self.margin = max(4, round(min(self.w, self.h) * 0.03))
        self.line = max(2, round(min(self.w, self.h) / 220))
        self.base = type_size or max(
            11, round(min(self.h, self.w * 0.75) * (0.06 if count <= 2 else 0.05))
        )
        self.placed: list[tuple[float, float, float, float]] = []
        self.previous: tuple[float, float, float, float] | None = None  # in reading order
        self.scale = 96 / self.w
        thumb = image.convert("L").resize((96, max(1, round(self.h * self.scale))))
        self.ink = _summed_area(thumb)

    # --- placing ---------------------------------------------------------------------------

    def place_all(self, items: list[_Item]) -> None:
        # Balloons the person placed are fitted first, so that the lettering's own
        # choices for the others keep off them.
        fitted = {i: self._fit_placed(item) for i, item in enumerate(items) if item.line.place}
        self.placed = [box for _, box in fitted.values()]
        self.previous = None
        for i, item in enumerate(items):
            if i in fitted:
                block, placed = fitted[i]
            else:
                block, placed = self._fit_auto(item)
                self.placed.append(placed)
            self.previous = placed
            self._paint(item, block, placed)

    def _vertical_for(self, text: str) -> bool:
        # A line of the language's own script goes in columns; a line of Latin
        # letters (a name, "OK!", an untranslated line) stays horizontal.
        return self.vertical and bool(JAPANESE.search(text))

    def _fit_auto(self, item: _Item):
        text, kind, style = item.line.text.strip(), item.kind, item.style
        vertical = self._vertical_for(text)
        placed = None
        for size in self._sizes(style):
            block = self._block(text, size, vertical, kind)
            if block is None:
                continue
            bw, bh = self._box_size(block, kind, style)
            placed = self._best_spot(bw, bh, kind, item.line.speaker)
            if placed is not None:
                return block, placed
        # crowded: smallest type, best spot even if it overlaps
        block = self._block(text, self._sizes(style)[-1], vertical, kind, force=True)
        bw, bh = self._box_size(block, kind, style)
        placed = self._best_spot(bw, bh, kind, item.line.speaker, allow_overlap=True)
        return block, placed

    def _fit_placed(self, item: _Item):
        """The balloon centred where the person put it: as its text grows it grows around
        that centre, its type shrinking within bounds, and it never leaves the panel."""
        text, kind, style = item.line.text.strip(), item.kind, item.style
        vertical = self._vertical_for(text)
        m = self.margin
        block = None
        for size in self._sizes(style):
            block = self._block(text, size, vertical, kind)
            if block is None:
                continue
            bw, bh = self._box_size(block, kind, style)
            if bw <= self.w - 2 * m and bh <= self.h - 2 * m:
                break
        else:
            block = self._block(text, self._sizes(style)[-1], vertical, kind, force=True)
        bw, bh = self._box_size(block, kind, style)
        bw, bh = min(bw, self.w - 2 * m), min(bh, self.h - 2 * m)
        px, py = item.line.place or (0.5, 0.5)
        x0 = min(max(m, px * self.w - bw / 2), self.w - m - bw)
        y0 = min(max(m, py * self.h - bh / 2), self.h - m - bh)
        return block, (x0, y0, x0 + bw, y0 + bh)

    def _sizes(self, style: str = SPEECH) -> list[int]:
        base = self.base * (0.85 if style == WHISPER else 1.0)  # a whisper's type is smaller
        return sorted({max(9, round(base * f)) for f in (1, 0.9, 0.8, 0.7, 0.6)}, reverse=True)

    def _block(self, text: str, size: int, vertical: bool, kind: str, force=False) -> _Block | None:
        """Text set at `size` within the largest balloon allowed, or None if it does not fit."""
        max_w = self.w * (0.46 if kind == "balloon" else 0.6)
        max_h = self.h * (0.62 if vertical else 0.5)
        if vertical:
            f = cjk_font(size)
            step = size * 1.08
            per_column = max(1, int(max_h / step))
            columns = [text[i : i + per_column] for i in range(0, len(text), per_column)]
            width = len(columns) * size * 1.25
            if width > max_w and not force:
                return None
            return _Block(columns, f, True, width, min(len(text), per_column) * step)
        f = face_for(text, size)
        limit = max_w * (0.72 if kind == "balloon" else 0.92)
        if kind == "balloon":  # a rounder balloon: about sqrt(characters / 8) lines
            rows = max(1, round(math.sqrt(len(text) / 8)))
            limit = min(limit, self.draw.textlength(text, font=f) / rows * 1.15 + size)
        lines = wrap(self.draw, text, f, limit)
        line_h = size * 1.12
        if len(lines) * line_h > max_h:
            if not force:
                return None
            lines = lines[: max(1, int(max_h / line_h))]
            lines[-1] = lines[-1].rstrip(".,;: ") + "…"
        width = max(self.draw.textlength(line, font=f) for line in lines)
        return _Block(lines, f, False, width, len(lines) * line_h)

    def _box_size(self, block: _Block, kind: str, style: str = SPEECH) -> tuple[float, float]:
        pad = block.font.size * 0.5
        if kind == "balloon":  # an ellipse around the text block
            bw, bh = block.text_w * 1.3 + 2 * pad, block.text_h * 1.3 + 2 * pad
            reach = BURST_REACH if style == SHOUT else CLOUD_REACH if style == THOUGHT else 1.0
            extra = (reach - 1) * min(bw, bh)  # a burst's spikes and a cloud's puffs stand out
            return bw + extra, bh + extra
        return block.text_w + 2 * pad, block.text_h + 1.2 * pad

    def _best_spot(self, bw, bh, kind, speaker, allow_overlap=False):
        m = self.margin
        if bw > self.w - 2 * m or bh > self.h - 2 * m:
            if not allow_overlap:
                return None
            bw, bh = min(bw, self.w - 2 * m), min(bh, self.h - 2 * m)
        steps_x = max(1, int((self.w - 2 * m - bw) // max(4, self.w / 24)))
        steps_y = max(1, int((self.h - 2 * m - bh) // max(4, self.h / 18)))
        best, best_cost = None, math.inf
        for j in range(steps_y + 1):
            y0 = m + (self.h - 2 * m - bh) * j / steps_y
            for i in range(steps_x + 1):
                x0 = m + (self.w - 2 * m - bw) * i / steps_x
                box = (x0, y0, x0 + bw, y0 + bh)
                if not allow_overlap and any(_overlap(box, p, gap=m / 2) for p in self.placed):
                    continue
                cost = self._cost(box, kind, speaker)
                if allow_overlap:
                    cost += 50 * sum(_area(box, p) for p in self.placed) / (bw * bh)
                if cost < best_cost:
                    best, best_cost = box, cost
        return best

    def _cost(self, box, kind: str, speaker: str) -> float:
        x0, y0, x1, y1 = box
        area = (x1 - x0) * (y1 - y0)
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        cost = 0.0
        for fx, fy, r in self.faces.values():  # covering a face (and hair) is the worst thing
            cost += 10 * _area(box, (fx - r * 1.2, fy - r * 2.0, fx + r * 1.2, fy + r * 1.1)) / area
            # then the body below it
            cost += 3 * _area(box, (fx - r * 1.6, fy + r * 1.1, fx + r * 1.6, fy + r * 5)) / area
        cost += 2.0 * self._ink(x0, y0, x1, y1)  # ink hidden
        cost += 0.6 * cy / self.h  # balloons read best near the top
        if kind == "caption":  # the caption opens the panel: the corner reading starts from
            corner_x = self.w if self.rtl else 0
            cost += 2.0 * abs(cx - corner_x) / self.w + 2.0 * cy / self.h
        elif speaker in self.faces:
            fx, fy, r = self.faces[speaker]
            cost += 1.6 * math.hypot(cx - fx, (cy - (fy - 2 * r))) / self.w
        else:  # narration: near where reading starts (top right, or top left)
            start_x = self.w if self.rtl else 0
            cost += 0.8 * abs(cx - start_x) / self.w
        if self.previous:  # reading order: later items to the reading side, or further down
            px0, py0, px1, py1 = self.previous
            pcx = (px0 + px1) / 2
            earlier_side = (cx > pcx) if self.rtl else (cx < pcx)
            if y1 < py0:
                cost += 3.0
            elif earlier_side and y0 < py0 + (py1 - py0) * 0.3:
                cost += 2.5  # level with the previous one, yet before it
            elif earlier_side:
                cost += 0.5  # staggered lower: still read after it
        return cost

    def _ink(self, x0, y0, x1, y1) -> float:
        """How dark the art under a box is, 0 (paper) to 1 (solid ink)."""
        s, table = self.scale, self.ink
        rows, cols = len(table) - 1, len(table[0]) - 1
        a, b = min(cols, int(x0 * s)), min(rows, int(y0 * s))
        c, d = min(cols, max(a + 1, int(x1 * s))), min(rows, max(b + 1, int(y1 * s)))
        total = table[d][c] - table[b][c] - table[d][a] + table[b][a]
        return total / (255 * max(1, (c - a) * (d - b)))

    # --- painting ---------------------------------------------------------------------------

    def _paint(self, item: _Item, block: _Block, box) -> None:
        x0, y0, x1, y1 = box
        style = item.style
        if item.kind == "balloon":
            target = self._target(item.line)
            if style == SHOUT:
                self._burst(box, target, seed=item.line.text)
            elif style == THOUGHT:
                self._cloud(box, target)
            elif style == WHISPER:
                self._dashed(box, target)
            else:
                self.draw.ellipse(box, fill=PAPER, outline=INK, width=self.line)
                if target is not None:
                    self._tail(box, target)
        else:
            self.draw.rectangle(box, fill=PAPER, outline=INK, width=self.line)
        ink = WHISPER_INK if style == WHISPER else INK
        # A shout's type is bolder: each glyph drawn with an outline of its own ink.
        stroke = max(1, round(block.font.size / 18)) if style == SHOUT else 0
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        if block.vertical:
            self._vertical(block, cx, cy, ink=ink, stroke=stroke)
            return
        size = block.font.size
        line_h = size * 1.12
        top = cy - block.text_h / 2
        for i, line in enumerate(block.lines):
            tw = self.draw.textlength(line, font=block.font)
            left = cx - tw / 2 if item.kind == "balloon" else x0 + size * 0.5
            self.draw.text(
                (left, top + i * line_h + line_h / 2),
                line,
                font=block.font,
                fill=ink,
                anchor="lm",
                stroke_width=stroke,
                stroke_fill=ink,
            )

    def _target(self, line: Line) -> tuple[float, float, float] | None:
        """Where the tail aims: the point the person set (reached exactly), else the
        speaker's face (stopping short of it); None for no tail."""
        if line.tail is not None:
            return line.tail[0] * self.w, line.tail[1] * self.h, 0.0
        return self.faces.get(line.speaker)

    def _vertical(self, block: _Block, cx: float, cy: float, ink=INK, stroke: int = 0) -> None:
        """Columns top to bottom, the first on the right, as Japanese is set."""
        size = block.font.size
        step = size * 1.08
        col_w = size * 1.25
        right = cx + block.text_w / 2 - col_w / 2
        top = cy - block.text_h / 2
        for c, column in enumerate(block.lines):
            x = right - c * col_w
            for k, char in enumerate(column):
                y = top + k * step + step / 2
                char = VERTICAL_FORMS.get(char, char)
                if char in ROTATED:
                    glyph = Image.new("L", (size * 2, size * 2), 0)
                    ImageDraw.Draw(glyph).text(
                        (size, size),
                        char,
                        font=block.font,
                        fill=255,
                        anchor="mm",
                        stroke_width=stroke,
                        stroke_fill=255,
                    )
                    glyph = glyph.rotate(-90)
                    self.image.paste(ink, (round(x - size), round(y - size)), glyph)
                elif char in HANGING:
                    self.draw.text(
                        (x + size * 0.35, y - size * 0.35),
                        char,
                        font=block.font,
                        fill=ink,
                        anchor="mm",
                    )
                else:
                    self.draw.text(
                        (x, y),
                        char,
                        font=block.font,
                        fill=ink,
                        anchor="mm",
                        stroke_width=stroke,
                        stroke_fill=ink,
                    )

    # --- balloon shapes ---------------------------------------------------------------------

    def _burst(self, box, target, *, seed: str) -> None:
        """A shout: an irregular spiky outline around the text's ellipse; the spike nearest
        the speaker reaches toward them as the tail."""
        x0, y0, x1, y1 = box
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        ox, oy = (x1 - x0) / 2, (y1 - y0) / 2  # the spikes' reach
        ix, iy = _inner(ox, oy, BURST_REACH)  # the valleys: the text's ellipse
        rng = random.Random(zlib.crc32(seed.encode()))
        perimeter = 2 * math.pi * math.sqrt((ox * ox + oy * oy) / 2)
        spikes = max(9, min(28, round(perimeter / max(12.0, self.line * 14))))
        points, tips = [], []
        for i in range(2 * spikes):
            a = 2 * math.pi * (i + rng.uniform(-0.25, 0.25)) / (2 * spikes)
            if i % 2 == 0:
                reach = rng.uniform(0.82, 1.0)
                tips.append(len(points))
                points.append((cx + math.cos(a) * ox * reach, cy + math.sin(a) * oy * reach))
            else:
                points.append((cx + math.cos(a) * ix, cy + math.sin(a) * iy))
        tip = self._tip(box, target, ix, iy)
        if tip is not None:  # the spike pointing most toward the speaker becomes the tail
            aim = math.atan2(tip[1] - cy, tip[0] - cx)
            nearest = min(
                tips,
                key=lambda k: abs(
                    math.remainder(math.atan2(points[k][1] - cy, points[k][0] - cx) - aim, math.tau)
                ),
            )
            points[nearest] = tip
        self.draw.polygon(points, fill=PAPER)
        self.draw.line([*points, points[0]], fill=INK, width=self.line, joint="curve")

    def _cloud(self, box, target) -> None:
        """A thought: a cloud of puffs around the text's ellipse, and a trail of shrinking
        bubbles toward the thinker instead of a tail."""
        x0, y0, x1, y1 = box
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        ix, iy = _inner((x1 - x0) / 2, (y1 - y0) / 2, CLOUD_REACH)
        puff = max(4.0, (min(x1 - x0, y1 - y0) / 2 - min(ix, iy)) * 1.1)
        perimeter = 2 * math.pi * math.sqrt((ix * ix + iy * iy) / 2)
        count = max(8, round(perimeter / (puff * 1.3)))
        centres = [
            (cx + math.cos(a) * ix, cy + math.sin(a) * iy)
            for a in (2 * math.pi * k / count for k in range(count))
        ]
        for px, py in centres:  # outlines, then the insides painted over: only the rim stays
            self.draw.ellipse((px - puff, py - puff, px + puff, py + puff), fill=INK)
        inner = puff - self.line
        for px, py in centres:
            self.draw.ellipse((px - inner, py - inner, px + inner, py + inner), fill=PAPER)
        self.draw.ellipse((cx - ix, cy - iy, cx + ix, cy + iy), fill=PAPER)
        tip = self._tip(box, target, ix + puff, iy + puff)
        if tip is None:
            return
        angle = math.atan2(tip[1] - cy, tip[0] - cx)
        edge = _ellipse_radius(ix + puff, iy + puff, angle)
        start = (cx + math.cos(angle) * edge, cy + math.sin(angle) * edge)
        length = math.hypot(tip[0] - start[0], tip[1] - start[1])
        radii = [min(ix, iy) * size for size in (0.3, 0.2, 0.12)]  # shrinking to the thinker
        needed = sum(2 * r for r in radii) + radii[-1] * len(radii)  # with a gap before each
        # Close by: smaller bubbles (a little past the point if need be), still three and
        # apart, and never past the panel's edge.
        dx, dy = math.cos(angle), math.sin(angle)
        room = min(
            (self.w - start[0]) / dx if dx > 1e-9 else start[0] / -dx if dx < -1e-9 else math.inf,
            (self.h - start[1]) / dy if dy > 1e-9 else start[1] / -dy if dy < -1e-9 else math.inf,
        )
        scale = min(1.0, max(0.6, length / needed), room / needed)
        radii = [max(2.0, r * scale) for r in radii]
        along = 0.0
        for r in radii:
            along += radii[-1] + r
            bx, by = start[0] + math.cos(angle) * along, start[1] + math.sin(angle) * along
            inset = r + self.line  # a bubble stays inside the panel
            bx, by = min(max(bx, inset), self.w - inset), min(max(by, inset), self.h - inset)
            self.draw.ellipse(
                (bx - r, by - r, bx + r, by + r), fill=PAPER, outline=INK, width=self.line
            )
            along += r

    def _dashed(self, box, target) -> None:
        """A whisper: the balloon's oval drawn in dashes, its tail too."""
        x0, y0, x1, y1 = box
        ax, ay = (x1 - x0) / 2, (y1 - y0) / 2
        self.draw.ellipse(box, fill=PAPER)
        perimeter = math.pi * (3 * (ax + ay) - math.sqrt((3 * ax + ay) * (ax + 3 * ay)))
        dashes = max(10, round(perimeter / max(10.0, self.line * 7)))
        span = 360 / dashes
        for k in range(dashes):
            self.draw.arc(box, k * span, k * span + span * 0.55, fill=INK, width=self.line)
        if target is None:
            return
        wedge = self._wedge(box, target)
        if wedge is None:
            return
        base_a, tip, base_b, inner = wedge
        self.draw.polygon([inner[0], base_a, tip, base_b, inner[1]], fill=PAPER)
        for start in (base_a, base_b):
            length = math.hypot(tip[0] - start[0], tip[1] - start[1])
            pieces = max(2, round(length / max(6.0, self.line * 4)))
            for k in range(0, pieces, 2):
                a, b = k / pieces, min(1.0, (k + 1) / pieces)
                self.draw.line(
                    [
                        (start[0] + (tip[0] - start[0]) * a, start[1] + (tip[1] - start[1]) * a),
                        (start[0] + (tip[0] - start[0]) * b, start[1] + (tip[1] - start[1]) * b),
                    ],
                    fill=INK,
                    width=self.line,
                )

    def _tip(self, box, target, ax: float, ay: float) -> tuple[float, float] | None:
        """Where a tail toward `target` ends, for a balloon whose rim is the ellipse
        (ax, ay) around the box's centre: short of a face, on a point the person set;
        None when the balloon sits on it."""
        if target is None:
            return None
        x0, y0, x1, y1 = box
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        fx, fy, r = target
        distance = math.hypot(fx - cx, fy - cy)
        angle = math.atan2(fy - cy, fx - cx)
        edge = _ellipse_radius(ax, ay, angle)
        if distance <= edge:
            return None
        if r > 0:
            reach = max(distance - r * 1.25, edge + min(ax, ay) * 0.4)
            reach = min(reach, edge + max(ax, ay) * 1.2)
        else:
            reach = distance  # the point the person set
        return cx + math.cos(angle) * reach, cy + math.sin(angle) * reach

    def _wedge(self, box, face):
        """A speech tail's corners: the two points on the rim, the tip, and the two
        points inside the balloon its fill starts from; None when no tail fits."""
        x0, y0, x1, y1 = box
        cx, cy, ax, ay = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2
        tip = self._tip(box, face, ax, ay)
        if tip is None:
            return None
        angle = math.atan2(tip[1] - cy, tip[0] - cx)
        edge = _ellipse_radius(ax, ay, angle)
        spread = min(0.35, (min(ax, ay) * 0.35) / max(1.0, edge))
        points = []
        for delta in (-spread, spread):
            a = angle + delta
            e = _ellipse_radius(ax, ay, a)
            points.append((cx + math.cos(a) * e, cy + math.sin(a) * e))
        inner = [(cx + (px - cx) * 0.8, cy + (py - cy) * 0.8) for px, py in points]
        return points[0], tip, points[1], inner

    def _tail(self, box, face) -> None:
        """A wedge from the balloon's edge toward the speaker, stopping short of the face
        (or reaching the point the person set)."""
        wedge = self._wedge(box, face)
        if wedge is None:
            return  # the balloon sits on its speaker: no tail to draw
        base_a, tip, base_b, inner = wedge
        self.draw.polygon([inner[0], base_a, tip, base_b, inner[1]], fill=PAPER)
        self.draw.line([base_a, tip, base_b], fill=INK, width=self.line, joint="curve")


def _sound_effect(image: Image.Image, effect: SoundEffect, vertical: bool) -> None:
    """Large outlined art text (ink with a paper outline) centred on its point, turned by
    its angle; in columns when the language is set vertically and it is in its script."""
    w, h = image.size
    size = max(10, round(effect.size * min(w, h)))
    columns = vertical and bool(JAPANESE.search(effect.text))
    for _ in range(6):  # shrink until it fits in the panel
        font = cjk_font(size) if JAPANESE.search(effect.text) else title_face(effect.text, size)
        stroke = max(2, round(size / 9))
        if columns:
            step = size * 1.02
            lw, lh = round(size * 1.2 + 2 * stroke), round(len(effect.text) * step + 2 * stroke)
        else:
            left, top, right, bottom = font.getbbox(effect.text, stroke_width=stroke)
            lw, lh = right - left + 2 * stroke, bottom - top + 2 * stroke
        if lw <= w * 0.95 and lh <= h * 0.95:
            break
        size = max(10, round(size * 0.8))
    layer = Image.new("RGBA", (max(1, lw), max(1, lh)), (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    ink, outline = (*INK, 255), (*PAPER, 255)
    if columns:
        for k, char in enumerate(effect.text):
            char = VERTICAL_FORMS.get(char, char)
            centre = (lw / 2, stroke + k * step + step / 2)
            if char in ROTATED:  # a long vowel mark runs down the column
                side = round(size * 1.2 + 2 * stroke)
                glyph = Image.new("RGBA", (side, side), (0, 0, 0, 0))
                ImageDraw.Draw(glyph).text(
                    (side / 2, side / 2),
                    char,
                    font=font,
                    fill=ink,
                    anchor="mm",
                    stroke_width=stroke,
                    stroke_fill=outline,
                )
                glyph = glyph.rotate(-90)
                corner = (round(centre[0] - side / 2), round(centre[1] - side / 2))
                layer.paste(glyph, corner, glyph)
                continue
            draw.text(
                centre,
                char,
                font=font,
                fill=ink,
                anchor="mm",
                stroke_width=stroke,
                stroke_fill=outline,
            )
    else:
        draw.text(
            (lw / 2, lh / 2),
            effect.text,
            font=font,
            fill=ink,
            anchor="mm",
            stroke_width=stroke,
            stroke_fill=outline,
        )
    if effect.angle:
        layer = layer.rotate(effect.angle, resample=Image.BILINEAR, expand=True)
    x = round(effect.x * w - layer.width / 2)
    y = round(effect.y * h - layer.height / 2)
    image.paste(layer, (x, y), layer)


def _summed_area(image: Image.Image) -> list[list[int]]:
    """table[y][x] = the ink (255 - value) summed over the pixels above and left of (x, y)."""
    width, height = image.size
    pixels = image.load()
    table = [[0] * (width + 1) for _ in range(height + 1)]
    for y in range(height):
        run = 0
        row, above = table[y + 1], table[y]
        for x in range(width):
            run += 255 - pixels[x, y]
            row[x + 1] = above[x + 1] + run
    return table


def wrap(draw: ImageDraw.ImageDraw, text: str, f, width: float) -> list[str]:
    """Words wrapped to `width`; a word wider than the line is hyphenated. Text
    without spaces (Chinese, Japanese) breaks between characters, never before a
    closing mark or after an opening one."""
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        current = ""
        for word, spaced in _tokens(paragraph):
            while draw.textlength(word, font=f) > width and len(word) > 1:
                cut = max(1, int(len(word) * width / draw.textlength(word, font=f)) - 1)
                if current:
                    lines.append(current)
                    current = ""
                lines.append(word[:cut] + "-")
                word = word[cut:]
            trial = f"{current} {word}" if spaced and current else current + word
            if draw.textlength(trial, font=f) <= width:
                current = trial
            else:
                lines.append(current)
                current = word
        lines.append(current)
    return [line for line in lines if line] or [""]


def _tokens(paragraph: str) -> list[tuple[str, bool]]:
    """The pieces a line may break between, each with whether a space comes before
    it: words, and single characters of unspaced scripts (with the marks that may
    not start or end a line kept on their neighbour)."""
    tokens: list[list] = []
    spaced = False
    for match in TOKEN.finditer(paragraph):
        piece = match.group()
        if piece.isspace():
            spaced = True
            continue
        glued = (
            tokens
            and not spaced
            and (piece[0] in NO_LINE_START or tokens[-1][0][-1] in NO_LINE_END)
        )
        if glued:
            tokens[-1][0] += piece
        else:
            tokens.append([piece, spaced])
        spaced = False
    return [(piece, spaced) for piece, spaced in tokens]


def _inner(ox: float, oy: float, reach: float) -> tuple[float, float]:
    """The text's ellipse inside a burst or cloud of half-sizes (ox, oy): what
    `_box_size` added to each side, taken off again."""
    extra = (reach - 1) * min(ox, oy) / reach
    return ox - extra, oy - extra


def _ellipse_radius(ax: float, ay: float, angle: float) -> float:
    c, s = math.cos(angle), math.sin(angle)
    return (ax * ay) / math.sqrt((ay * c) ** 2 + (ax * s) ** 2)


def _area(a, b) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def _overlap(a, b, gap: float = 0) -> bool:
    return not (
        a[2] + gap <= b[0] or b[2] + gap <= a[0] or a[3] + gap <= b[1] or b[3] + gap <= a[1]
    )
