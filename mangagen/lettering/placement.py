"""Balloons, tails, narration boxes and captions, placed where they cover the least of the picture.

`letter()` takes a panel's art and its current text and returns the art with
the lettering drawn over it; `arrange()` says where each item goes without
drawing it (`paint_outline()` and `paint_text()` draw one item's parts: a
layered export puts each on a layer of its own). Placement, for each item in reading order:
every position on a grid is scored by how much of a face it covers (the
renderer's own face positions when it reported them, otherwise zones guessed
from the shot), how much ink it hides, how far it sits from its speaker, and
whether it keeps reading order (right to left, or left to right, then down);
overlapping an earlier balloon is refused. Text is fitted to its balloon by
shrinking the type within bounds (`text.py` sets it). The panel's language
decides the setting: Japanese lines are set vertically, every other language
horizontally (a line of Chinese or Japanese set horizontally breaks between
characters, and never before a closing mark).

A person may direct it (docs/api.md, "Lettering you direct"): a line's
balloon style (`shapes.py` draws a speech oval, a thought cloud with a trail
of bubbles, a shout's spiky burst with bolder type, a whisper's dashed outline
with smaller, lighter type) and its place (the balloon's centre and where its
tail ends, fractions of the panel), and a panel's sound effects
(`sound_effects.py`: large outlined art text at a point, turned, in columns in
Japanese). A placed balloon is fitted around its centre and kept inside the
panel; the others are placed around it as above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from PIL import Image, ImageDraw

from .languages import is_vertical
from .panel import SHOUT, SPEECH, WHISPER, Letterable, Line, Speaker
from .report import Placed
from .shapes import INK, Outlines, reach, tail_end
from .sound_effects import draw_sound_effect
from .text import JAPANESE, Block, draw_text, set_text

WHISPER_INK = (96, 96, 96)  # a whisper's type: lighter than the rest


def letter(
    image: Image.Image,
    *,
    panel: Letterable,
    direction: str = "rtl",
    type_size: int | None = None,
    report: list[Placed] | None = None,
) -> Image.Image:
    """The art with the panel's lettering drawn over it (a new RGB image).

    `type_size` (pixels) keeps the lettering one size across a page; without
    it the type is sized from the panel. `report`, when given, receives where each
    thing was lettered (`report.Placed`: sound effects first, then in reading order).
    """
    out = image.convert("RGB")
    vertical = is_vertical(panel.language)
    for effect in panel.sfx:  # art text first: balloons go over it, and avoid its ink
        placed = draw_sound_effect(out, effect, vertical)
        if report is not None:
            report.append(placed)
    arranged = arrange(out, panel=panel, direction=direction, type_size=type_size)
    for item in arranged:
        paint_outline(out, item)
        paint_text(out, item)
    if report is not None:
        report.extend(item.reported() for item in arranged)
    return out


def arrange(
    image: Image.Image, *, panel: Letterable, direction: str = "rtl", type_size: int | None = None
) -> list[Arranged]:
    """Where the panel's caption, balloons and narration go on `image` (its art with the
    sound effects drawn: their ink is avoided), in the order they are painted. Draws
    nothing: `letter()` paints them, and a layered export paints each on a layer."""
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
        return []
    vertical = is_vertical(panel.language)
    letterer = _Letterer(image, speakers, direction, len(items), type_size, vertical)
    return letterer.place_all(items)


@dataclass(frozen=True)
class Arranged:
    """A caption, balloon or narration box where the lettering put it: its line, its text
    as set (`block`), its box on the panel (x0, y0, x1, y1), where its tail aims (a face
    `(x, y, r)`, a point `(x, y, 0)`, or None), the width of its outline (`pen`) and the
    panel's size (a thought's bubbles stay inside it)."""

    kind: str  # caption | balloon | narration
    line: Line
    block: Block
    box: tuple[float, float, float, float]
    target: tuple[float, float, float] | None
    pen: int
    panel: tuple[int, int]
    moved_in: bool = False  # moved from where the person put it, to stay inside the panel
    shrunk: bool = False  # set smaller than its style's type, to fit

    def reported(self) -> Placed:
        """As `letter()` reports it (`report.Placed`)."""
        return Placed(
            kind=self.kind,
            number=self.line.number,
            box=self.box,
            tail=tail_end(self.style, self.box, self.target) if self.target is not None else None,
            auto=self.line.place is None,
            moved_in=self.moved_in,
            shrunk=self.shrunk,
        )

    @property
    def style(self) -> str:
        return self.line.style if self.kind == "balloon" else SPEECH

    @property
    def ink(self) -> tuple[int, int, int]:
        return WHISPER_INK if self.style == WHISPER else INK

    @property
    def stroke(self) -> int:
        """How much bolder the type is drawn: a shout's glyphs get an outline of their ink."""
        return max(1, round(self.block.font.size / 18)) if self.style == SHOUT else 0


def paint_outline(image: Image.Image, placed: Arranged) -> None:
    """The balloon (with its tail) or the box of `placed`, drawn on `image`."""
    outlines = Outlines(ImageDraw.Draw(image), placed.panel, placed.pen)
    if placed.kind == "balloon":
        outlines.balloon(placed.style, placed.box, placed.target, seed=placed.line.text)
    else:
        outlines.box(placed.box)


def paint_text(image: Image.Image, placed: Arranged) -> None:
    """The text of `placed`, drawn on `image` in its box as the lettering set it."""
    centred = placed.kind == "balloon"
    draw_text(
        image, placed.block, placed.box, centred=centred, ink=placed.ink, stroke=placed.stroke
    )


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

    def place_all(self, items: list[_Item]) -> list[Arranged]:
        """Places every item; where each went, in reading order."""
        # Balloons the person placed are fitted first, so that the lettering's own
        # choices for the others keep off them.
        fitted = {i: self._fit_placed(item) for i, item in enumerate(items) if item.line.place}
        self.placed = [box for _, box in fitted.values()]
        self.previous = None
        result = []
        for i, item in enumerate(items):
            if i in fitted:
                block, placed = fitted[i]
            else:
                block, placed = self._fit_auto(item)
                self.placed.append(placed)
            self.previous = placed
            target = self._target(item.line) if item.kind == "balloon" else None
            moved_in = False
            if item.line.place is not None:
                cx, cy = (placed[0] + placed[2]) / 2, (placed[1] + placed[3]) / 2
                px, py = item.line.place
                moved_in = abs(cx - px * self.w) > 1 or abs(cy - py * self.h) > 1
            result.append(
                Arranged(
                    item.kind,
                    item.line,
                    block,
                    tuple(placed),
                    target,
                    self.line,
                    (self.w, self.h),
                    moved_in=moved_in,
                    shrunk=block.font.size < self._sizes(item.style)[0],
                )
            )
        return result

    def _vertical_for(self, text: str) -> bool:
        # A line of the language's own script goes in columns; a line of Latin
        # letters (a name, "OK!", an untranslated line) stays horizontal.
        return self.vertical and bool(JAPANESE.search(text))

    def _settings(self, item: _Item):
        """The item's text set at each size that fits its largest balloon, largest first,
        each with its balloon's width and height."""
        text, kind, style = item.line.text.strip(), item.kind, item.style
        vertical = self._vertical_for(text)
        for size in self._sizes(style):
            block = self._block(text, size, vertical, kind)
            if block is not None:
                yield (block, *self._box_size(block, kind, style))

    def _squeezed(self, item: _Item):
        """The item's text at the smallest type, cut short if even that does not fit,
        with its balloon's width and height."""
        text, kind, style = item.line.text.strip(), item.kind, item.style
        vertical = self._vertical_for(text)
        block = self._block(text, self._sizes(style)[-1], vertical, kind, force=True)
        return (block, *self._box_size(block, kind, style))

    def _fit_auto(self, item: _Item):
        for block, bw, bh in self._settings(item):
            placed = self._best_spot(bw, bh, item.kind, item.line.speaker)
            if placed is not None:
                return block, placed
        # crowded: smallest type, best spot even if it overlaps
        block, bw, bh = self._squeezed(item)
        placed = self._best_spot(bw, bh, item.kind, item.line.speaker, allow_overlap=True)
        return block, placed

    def _fit_placed(self, item: _Item):
        """The balloon centred where the person put it: as its text grows it grows around
        that centre, its type shrinking within bounds, and it never leaves the panel."""
        m = self.margin
        room_w, room_h = self.w - 2 * m, self.h - 2 * m
        fits = (s for s in self._settings(item) if s[1] <= room_w and s[2] <= room_h)
        block, bw, bh = next(fits, None) or self._squeezed(item)
        bw, bh = min(bw, room_w), min(bh, room_h)
        px, py = item.line.place or (0.5, 0.5)
        x0 = min(max(m, px * self.w - bw / 2), self.w - m - bw)
        y0 = min(max(m, py * self.h - bh / 2), self.h - m - bh)
        return block, (x0, y0, x0 + bw, y0 + bh)

    def _sizes(self, style: str = SPEECH) -> list[int]:
        base = self.base * (0.85 if style == WHISPER else 1.0)  # a whisper's type is smaller
        return sorted({max(9, round(base * f)) for f in (1, 0.9, 0.8, 0.7, 0.6)}, reverse=True)

    def _block(self, text: str, size: int, vertical: bool, kind: str, force=False) -> Block | None:
        """Text set at `size` within the largest balloon allowed, or None if it does not fit."""
        return set_text(
            self.draw,
            text,
            size,
            vertical=vertical,
            balloon=kind == "balloon",
            max_w=self.w * (0.46 if kind == "balloon" else 0.6),
            max_h=self.h * (0.62 if vertical else 0.5),
            force=force,
        )

    def _box_size(self, block: Block, kind: str, style: str = SPEECH) -> tuple[float, float]:
        pad = block.font.size * 0.5
        if kind == "balloon":  # an ellipse around the text block
            bw, bh = block.text_w * 1.3 + 2 * pad, block.text_h * 1.3 + 2 * pad
            extra = (reach(style) - 1) * min(bw, bh)  # a burst's spikes, a cloud's puffs
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

    def _target(self, line: Line) -> tuple[float, float, float] | None:
        """Where the tail aims: the point the person set (reached exactly), else the
        speaker's face (stopping short of it); None for no tail."""
        if line.tail is not None:
            return line.tail[0] * self.w, line.tail[1] * self.h, 0.0
        return self.faces.get(line.speaker)


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


def _area(a, b) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def _overlap(a, b, gap: float = 0) -> bool:
    return not (
        a[2] + gap <= b[0] or b[2] + gap <= a[0] or a[3] + gap <= b[1] or b[3] + gap <= a[1]
    )
