"""Sound effects: large outlined art text lettered into the picture where the person put
it, turned, in columns when the language is set vertically and the effect is in its
script. It stays inside its panel, made smaller or moved in as it must."""

from __future__ import annotations

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
    MIN_LETTERS), and one that would cross an edge is moved in as far as it must. What
    is returned says where it went, and whether it was made smaller or moved in."""
    w, h = image.size
    asked = max(MIN_LETTERS, round(effect.size * min(w, h)))
    margin = max(2, round(min(w, h) * 0.015))
    size = asked
    while True:  # smaller until it fits in the panel, turned as it is drawn
        layer = _lettered(effect, size, vertical)
        if effect.angle:
            layer = layer.rotate(effect.angle, resample=Image.BILINEAR, expand=True)
        fits = layer.width <= w - 2 * margin and layer.height <= h - 2 * margin
        if fits or size <= MIN_LETTERS:
            break
        # Letters' extent grows with their size: the size that fits, about, then on down.
        scale = min((w - 2 * margin) / layer.width, (h - 2 * margin) / layer.height)
        size = max(MIN_LETTERS, min(size - 1, int(size * scale)))
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


def _within(start: int, length: int, room: int, margin: int) -> int:
    """`start` moved as little as it must for `length` to lie within `room` less its
    margins (centred on it when it cannot)."""
    if length > room - 2 * margin:
        return round((room - length) / 2)
    return min(max(start, margin), room - margin - length)


def _lettered(effect: SoundEffect, size: int, vertical: bool) -> Image.Image:
    """The effect's letters at `size`, upright, on a transparent layer of their size."""
    columns = vertical and bool(JAPANESE.search(effect.text))
    font = cjk_font(size) if JAPANESE.search(effect.text) else title_face(effect.text, size)
    stroke = max(2, round(size / 9))
    step = size * 1.02
    if columns:
        lw, lh = round(size * 1.2 + 2 * stroke), round(len(effect.text) * step + 2 * stroke)
    else:
        left, top, right, bottom = font.getbbox(effect.text, stroke_width=stroke)
        lw, lh = right - left + 2 * stroke, bottom - top + 2 * stroke
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
        draw.text((lw / 2, lh / 2), effect.text, **pen)
        return layer
    for k, char in enumerate(effect.text):
        char = VERTICAL_FORMS.get(char, char)
        centre = (lw / 2, stroke + k * step + step / 2)
        if char in ROTATED:  # a long vowel mark runs down the column
            side = round(size * 1.2 + 2 * stroke)
            glyph = Image.new("RGBA", (side, side), (0, 0, 0, 0))
            ImageDraw.Draw(glyph).text((side / 2, side / 2), char, **pen)
            glyph = glyph.rotate(-90)
            corner = (round(centre[0] - side / 2), round(centre[1] - side / 2))
            layer.paste(glyph, corner, glyph)
            continue
        draw.text(centre, char, **pen)
    return layer
