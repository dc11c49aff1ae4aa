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
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from PIL import Image, ImageDraw, ImageFont

from .fonts import cjk_font, face_for
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


@dataclass(frozen=True)
class Letterable:
    """What the lettering of one panel is made from: its current text and where faces are."""

    dialogue: tuple[tuple[str, str], ...] = ()  # (speaker, text), in reading order
    caption: str = ""
    shot: str = "medium"
    characters: tuple[str, ...] = ()
    faces: dict[str, Speaker] = field(default_factory=dict)
    blocking: dict[str, str] = field(default_factory=dict)  # name -> left | center | right
    language: str = ORIGINAL_DEFAULT  # what the text is written in: how it is set

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
    ):
        return cls(
            dialogue=tuple(
                (d.get("speaker", ""), one_line(d["text"]))
                for d in dialogue
                if one_line(d.get("text") or "")
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
    items = []
    if panel.caption.strip():
        items.append(("caption", "", panel.caption.strip()))
    speakers = panel.speakers()
    for speaker, text in panel.dialogue:
        items.append(("balloon" if speaker in speakers else "narration", speaker, text.strip()))
    if not items:
        return out
    vertical = is_vertical(panel.language)
    _Letterer(out, speakers, direction, len(items), type_size, vertical).place_all(items)
    return out


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
        self.scale = 96 / self.w
        thumb = image.convert("L").resize((96, max(1, round(self.h * self.scale))))
        self.ink = _summed_area(thumb)

    # --- placing ---------------------------------------------------------------------------

    def place_all(self, items) -> None:
        for kind, speaker, text in items:
            # A line of the language's own script goes in columns; a line of Latin
            # letters (a name, "OK!", an untranslated line) stays horizontal.
            vertical = self.vertical and bool(JAPANESE.search(text))
            placed = None
            for size in self._sizes():
                block = self._block(text, size, vertical, kind)
                if block is None:
                    continue
                bw, bh = self._box_size(block, kind)
                placed = self._best_spot(bw, bh, kind, speaker)
                if placed is not None:
                    break
            if placed is None:  # crowded: smallest type, best spot even if it overlaps
                block = self._block(text, self._sizes()[-1], vertical, kind, force=True)
                bw, bh = self._box_size(block, kind)
                placed = self._best_spot(bw, bh, kind, speaker, allow_overlap=True)
            self.placed.append(placed)
            self._paint(kind, speaker, block, placed)

    def _sizes(self) -> list[int]:
        return sorted({max(9, round(self.base * f)) for f in (1, 0.9, 0.8, 0.7, 0.6)}, reverse=True)

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

    def _box_size(self, block: _Block, kind: str) -> tuple[float, float]:
        pad = block.font.size * 0.5
        if kind == "balloon":  # an ellipse around the text block
            return block.text_w * 1.3 + 2 * pad, block.text_h * 1.3 + 2 * pad
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
        if self.placed:  # reading order: later items to the reading side, or further down
            px0, py0, px1, py1 = self.placed[-1]
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

    def _paint(self, kind, speaker, block: _Block, box) -> None:
        x0, y0, x1, y1 = box
        if kind == "balloon":
            self.draw.ellipse(box, fill=PAPER, outline=INK, width=self.line)
            if speaker in self.faces:
                self._tail(box, self.faces[speaker])
        else:
            self.draw.rectangle(box, fill=PAPER, outline=INK, width=self.line)
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        if block.vertical:
            self._vertical(block, cx, cy)
            return
        size = block.font.size
        line_h = size * 1.12
        top = cy - block.text_h / 2
        for i, line in enumerate(block.lines):
            tw = self.draw.textlength(line, font=block.font)
            left = cx - tw / 2 if kind == "balloon" else x0 + size * 0.5
            self.draw.text(
                (left, top + i * line_h + line_h / 2), line, font=block.font, fill=INK, anchor="lm"
            )

    def _vertical(self, block: _Block, cx: float, cy: float) -> None:
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
                        (size, size), char, font=block.font, fill=255, anchor="mm"
                    )
                    glyph = glyph.rotate(-90)
                    self.image.paste(INK, (round(x - size), round(y - size)), glyph)
                elif char in HANGING:
                    self.draw.text(
                        (x + size * 0.35, y - size * 0.35),
                        char,
                        font=block.font,
                        fill=INK,
                        anchor="mm",
                    )
                else:
                    self.draw.text((x, y), char, font=block.font, fill=INK, anchor="mm")

    def _tail(self, box, face) -> None:
        """A wedge from the balloon's edge toward the speaker, stopping short of the face."""
        x0, y0, x1, y1 = box
        cx, cy, ax, ay = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2
        fx, fy, r = face
        distance = math.hypot(fx - cx, fy - cy)
        if distance < 1:
            return
        reach = distance - r * 1.25
        angle = math.atan2(fy - cy, fx - cx)
        edge = _ellipse_radius(ax, ay, angle)
        if distance <= edge:
            return  # the balloon sits on its speaker: no tail to draw
        reach = max(reach, edge + min(ax, ay) * 0.4)  # close by: a short tail still says who
        reach = min(reach, edge + max(ax, ay) * 1.2)
        tip = (cx + math.cos(angle) * reach, cy + math.sin(angle) * reach)
        spread = min(0.35, (min(ax, ay) * 0.35) / max(1.0, edge))
        points = []
        for delta in (-spread, spread):
            a = angle + delta
            e = _ellipse_radius(ax, ay, a)
            points.append((cx + math.cos(a) * e, cy + math.sin(a) * e))
        inner = [(cx + (px - cx) * 0.8, cy + (py - cy) * 0.8) for px, py in points]
        self.draw.polygon([inner[0], points[0], tip, points[1], inner[1]], fill=PAPER)
        self.draw.line([points[0], tip, points[1]], fill=INK, width=self.line, joint="curve")


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
