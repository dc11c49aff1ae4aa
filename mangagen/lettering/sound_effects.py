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
