"""Setting a balloon's text: where a line may break (between words, or between the
characters of a script written without spaces, never before a closing mark or after an
opening one), the text set at a size within the room a balloon allows (in lines, or in
columns for Japanese), and drawn."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

from .fonts import cjk_font, face_for

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
LEADING = 1.12  # a line's height, of the type's size
COLUMN_STEP = 1.08  # a character's height in a column, of the type's size
COLUMN_WIDTH = 1.25  # a column's width, of the type's size


def one_line(text: str) -> str:
    """`text` as lettering draws it: every run of whitespace, line breaks and
    control characters one space (a balloon wraps its text itself)."""
    return BREAKS.sub(" ", text).strip()


@dataclass
class Block:
    """Text set at one size: its lines (or columns, first on the right), its font,
    and the size of the whole."""

    lines: list[str]
    font: ImageFont.FreeTypeFont
    vertical: bool
    text_w: float
    text_h: float


def set_text(
    draw: ImageDraw.ImageDraw,
    text: str,
    size: int,
    *,
    vertical: bool,
    balloon: bool,
    max_w: float,
    max_h: float,
    force: bool = False,
) -> Block | None:
    """`text` set at `size` within `max_w` by `max_h`, or None if it does not fit (with
    `force`, cut short with an ellipsis instead). A balloon's lines are kept short,
    for a rounder balloon."""
    if vertical:
        f = cjk_font(size)
        step = size * COLUMN_STEP
        per_column = max(1, int(max_h / step))
        columns = [text[i : i + per_column] for i in range(0, len(text), per_column)]
        width = len(columns) * size * COLUMN_WIDTH
        if width > max_w and not force:
            return None
        return Block(columns, f, True, width, min(len(text), per_column) * step)
    f = face_for(text, size)
    limit = max_w * (0.72 if balloon else 0.92)
    if balloon:  # a rounder balloon: about sqrt(characters / 8) lines
        rows = max(1, round(math.sqrt(len(text) / 8)))
        limit = min(limit, draw.textlength(text, font=f) / rows * 1.15 + size)
    lines = wrap(draw, text, f, limit)
    line_h = size * LEADING
    if len(lines) * line_h > max_h:
        if not force:
            return None
        lines = lines[: max(1, int(max_h / line_h))]
        lines[-1] = lines[-1].rstrip(".,;: ") + "…"
    width = max(draw.textlength(line, font=f) for line in lines)
    return Block(lines, f, False, width, len(lines) * line_h)


def draw_text(
    image: Image.Image, block: Block, box, *, centred: bool, ink, stroke: int = 0
) -> None:
    """The block drawn in `box`: its lines centred (a balloon's) or from the left (a
    box's), its columns centred; `stroke` draws each glyph bolder in its own ink."""
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    if block.vertical:
        _columns(image, block, cx, cy, ink=ink, stroke=stroke)
        return
    draw = ImageDraw.Draw(image)
    size = block.font.size
    line_h = size * LEADING
    top = cy - block.text_h / 2
    pen = _pen(block, ink, stroke)
    for i, line in enumerate(block.lines):
        tw = draw.textlength(line, font=block.font)
        left = cx - tw / 2 if centred else x0 + size * 0.5
        draw.text((left, top + i * line_h + line_h / 2), line, anchor="lm", **pen)


def _pen(block: Block, ink, stroke: int) -> dict:
    """How each glyph is drawn: in the block's font and `ink`, bolder by `stroke`."""
    return {"font": block.font, "fill": ink, "stroke_width": stroke, "stroke_fill": ink}


def _columns(image: Image.Image, block: Block, cx: float, cy: float, *, ink, stroke: int) -> None:
    """Columns top to bottom, the first on the right, as Japanese is set."""
    draw = ImageDraw.Draw(image)
    size = block.font.size
    step = size * COLUMN_STEP
    col_w = size * COLUMN_WIDTH
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
                image.paste(ink, (round(x - size), round(y - size)), glyph)
            elif char in HANGING:
                draw.text(
                    (x + size * 0.35, y - size * 0.35),
                    char,
                    font=block.font,
                    fill=ink,
                    anchor="mm",
                )
            else:
                draw.text((x, y), char, anchor="mm", **_pen(block, ink, stroke))


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
