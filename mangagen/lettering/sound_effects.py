"""Sound effects: large outlined art text lettered into the picture where the person put
it, turned, in columns when the language is set vertically and the effect is in its
script."""

from __future__ import annotations

from PIL import Image, ImageDraw

from .fonts import cjk_font, title_face
from .panel import SoundEffect
from .shapes import INK, PAPER
from .text import JAPANESE, ROTATED, VERTICAL_FORMS


def draw_sound_effect(image: Image.Image, effect: SoundEffect, vertical: bool) -> None:
    """Large outlined art text (ink with a paper outline) centred on its point, turned by
    its angle; in columns when the language is set vertically and it is in its script.

    Its layer is never larger than the panel: the letters are sized to fit in one step
    (measured at the size asked for, then scaled), and what still would not (a long
    effect at the smallest size) is cut at the panel's edges. Its cost is the panel's
    size, whatever the text (a 40-letter effect at half the panel's height drew and
    turned a layer several times the panel's size)."""
    w, h = image.size
    columns = vertical and bool(JAPANESE.search(effect.text))
    size = max(10, round(effect.size * min(w, h)))
    size, lw, lh, font, stroke, step = _measured(effect.text, size, columns)
    if lw > w * 0.95 or lh > h * 0.95:
        size = max(10, int(size * min(w * 0.95 / lw, h * 0.95 / lh)))
        size, lw, lh, font, stroke, step = _measured(effect.text, size, columns)
    lw, lh = min(lw, w), min(lh, h)  # the smallest size and still too long: cut
    layer = Image.new("RGBA", (max(1, lw), max(1, lh)), (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    pen = {  # ink with a paper outline
        "font": font,
        "fill": (*INK, 255),
        "anchor": "mm",
        "stroke_width": stroke,
        "stroke_fill": (*PAPER, 255),
    }
    if columns:
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
    else:
        draw.text((lw / 2, lh / 2), effect.text, **pen)
    if effect.angle:
        layer = layer.rotate(effect.angle, resample=Image.BILINEAR, expand=True)
    x = round(effect.x * w - layer.width / 2)
    y = round(effect.y * h - layer.height / 2)
    image.paste(layer, (x, y), layer)


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
