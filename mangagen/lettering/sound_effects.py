"""Sound effects: large outlined art text lettered into the picture where the person put
it, turned, in columns when the language is set vertically and the effect is in its
script. It stays inside its panel, made smaller or moved in as it must."""

from __future__ import annotations

import math

from PIL import Image, ImageDraw

from .fonts import cjk_font, title_face
from .panel import SoundEffect
from .report import SFX, Placed
from .shapes import INK, PAPER
from .text import JAPANESE, ROTATED, VERTICAL_FORMS

MIN_LETTERS = 10  # pixels: a sound effect's letters are never made smaller than this


def draw_sound_effect(image: Image.Image, effect: SoundEffect, vertical: bool) -> Placed:
    """Large outlined art text (ink with a paper outline) centred on its point, turned by
    its angle; in columns when the language is set vertically and it is in its script.

    It stays inside the panel: letters too large for it are made smaller (down to
    MIN_LETTERS), and one that would cross an edge is moved in as far as it must. The
    letters are measured, never drawn, until their size fits, then drawn once: the
    layer is never larger than the panel (what the smallest letters still cannot fit is
    cut at its edges), so its cost is the panel's size whatever the text (a 40-letter
    effect at half the panel's height once drew and turned a layer several times the
    panel's size). What is returned says where it went, and whether it was made smaller
    or moved in."""
    w, h = image.size
    margin = max(2, round(min(w, h) * 0.015))
    room_w, room_h = max(1, w - 2 * margin), max(1, h - 2 * margin)
    columns = vertical and bool(JAPANESE.search(effect.text))
    asked = stepped(max(MIN_LETTERS, round(effect.size * min(w, h))))
    size = asked
    while True:  # smaller until it fits in the panel, turned as it is drawn
        size, lw, lh, font, stroke, step = _measured(effect.text, size, columns)
        turned_w, turned_h = _turned(lw, lh, effect.angle)
        if (turned_w <= room_w and turned_h <= room_h) or size <= MIN_LETTERS:
            break
        # Letters' extent grows with their size: the size that fits, about, then on down.
        scale = min(room_w / turned_w, room_h / turned_h)
        size = max(MIN_LETTERS, min(size - 1, int(size * scale)))
    lw, lh = min(lw, w), min(lh, h)  # the smallest letters and still too long: cut
    layer = _lettered(effect.text, (lw, lh), font=font, stroke=stroke, step=step, columns=columns)
    if effect.angle:
        layer = layer.rotate(effect.angle, resample=Image.BILINEAR, expand=True)
    x = round(effect.x * w - layer.width / 2)
    y = round(effect.y * h - layer.height / 2)
    # Moved in past no edge: where even the smallest letters are wider than the panel,
    # they stay centred on it.
    inside_x = _within(x, layer.width, w, margin)
    inside_y = _within(y, layer.height, h, margin)
    image.paste(layer, (inside_x, inside_y), layer)
    return Placed(
        kind=SFX,
        number=effect.number,
        box=(inside_x, inside_y, inside_x + layer.width, inside_y + layer.height),
        moved_in=(inside_x, inside_y) != (x, y),
        shrunk=size < asked,
    )


def _turned(width: int, height: int, angle: float) -> tuple[float, float]:
    """The width and height of a `width` × `height` layer once turned by `angle` degrees."""
    a = math.radians(angle or 0)
    cos, sin = abs(math.cos(a)), abs(math.sin(a))
    return width * cos + height * sin, width * sin + height * cos


def _within(start: int, length: int, room: int, margin: int) -> int:
    """`start` moved as little as it must for `length` to lie within `room` less its
    margins (centred on it when it cannot)."""
    if length > room - 2 * margin:
        return round((room - length) / 2)
    return min(max(start, margin), room - margin - length)


def _lettered(text: str, size: tuple[int, int], *, font, stroke: int, step: float, columns: bool):
    """The letters, upright, on a transparent layer of `size` (cut where it is smaller
    than they are)."""
    lw, lh = size
    layer = Image.new("RGBA", (max(1, lw), max(1, lh)), (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    pen = {  # ink with a paper outline
        "font": font,
        "fill": (*INK, 255),
        "anchor": "mm",
        "stroke_width": stroke,
        "stroke_fill": (*PAPER, 255),
    }
    if not columns:
        draw.text((lw / 2, lh / 2), text, **pen)
        return layer
    for k, char in enumerate(text):
        char = VERTICAL_FORMS.get(char, char)
        centre = (lw / 2, stroke + k * step + step / 2)
        if char in ROTATED:  # a long vowel mark runs down the column
            side = round(font.size * 1.2 + 2 * stroke)
            glyph = Image.new("RGBA", (side, side), (0, 0, 0, 0))
            ImageDraw.Draw(glyph).text((side / 2, side / 2), char, **pen)
            glyph = glyph.rotate(-90)
            corner = (round(centre[0] - side / 2), round(centre[1] - side / 2))
            layer.paste(glyph, corner, glyph)
            continue
        draw.text(centre, char, **pen)
    return layer


def _measured(text: str, size: int, columns: bool):
    """The letters' size (`size` stepped, so few sizes are ever loaded: the font cache
    stays small), the layer's width and height for `text` at it, the font, the
    outline and a column's step."""
    size = stepped(size)
    font = cjk_font(size) if JAPANESE.search(text) else title_face(text, size)
    stroke = max(2, round(size / 9))
    step = size * 1.02
    if columns:
        width, height = round(size * 1.2 + 2 * stroke), round(len(text) * step + 2 * stroke)
        return size, width, height, font, stroke, step
    left, top, right, bottom = font.getbbox(text, stroke_width=stroke)
    return size, right - left + 2 * stroke, bottom - top + 2 * stroke, font, stroke, step


def stepped(size: int) -> int:
    """`size` rounded down to one of a few steps (each about 8% above the last): sound
    effects' letters need no finer sizes, and each size is a font face loaded and kept."""
    if size <= 12:
        return max(size, 10)
    step = 12
    while round(step * 1.08) <= size:
        step = round(step * 1.08)
    return step
