"""A page as layers: what the layered exports (PSD, OpenRaster) write.

The page is taken apart where it is put together (compose.py), with the same geometry
and the letterer's own placement (`lettering.arrange`), so each layer sits exactly where
its part is on the page the reader shows. Bottom to top: the paper; then a group per
panel, in reading order, holding the art (the kept take scaled as the page scales it,
whole, shown through a mask of its cell; a placeholder where nothing is drawn yet), the
sound effects (a layer each), the border, the balloons and the boxes of captions and
narration (a layer each, named by who speaks and what), and the text of each (an
editable type layer, with its pixels, and a hidden raster copy beneath it for programs
that cannot read type layers); then the title and the folio.

Stacked this way the layers give the page's picture back: sound effects lie under the
balloons and the border as on the page (the letterer places balloons over them, keeping
off their ink). Only where two balloons overlap (a crowded panel, or two a person placed
on each other) does the stack differ: every text is above every balloon.

Each lettering layer is drawn by the lettering's own code twice, on black and on white,
and its colour and opacity read from the two ("difference matting"): exact for what is
drawn solid, within a level or two of rounding for the anti-aliased edges of type.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from django.utils.translation import gettext, pgettext
from PIL import Image, ImageChops, ImageDraw

from mangagen.lettering import languages
from mangagen.lettering.placement import Arranged, arrange, paint_outline, paint_text
from mangagen.lettering.sound_effects import draw_sound_effect
from mangagen.lettering.text import one_line

from .builds import Comic
from .compose import (
    DPI,
    PanelArt,
    border_width,
    cells,
    draw_folio,
    draw_title,
    fit,
    page_size,
    page_type_size,
    placeholder,
)
from .typetool import TypeText, postscript_name

NAME_CHARACTERS = 48  # of a line, in a layer's name


@dataclass
class Layer:
    """A layer of pixels (RGBA) with its top-left corner on the page; hidden or not; shown
    only within `mask` (a rectangle of the page) when it has one; an editable type layer
    when it has `text`."""

    name: str
    image: Image.Image
    left: int
    top: int
    hidden: bool = False
    mask: tuple[int, int, int, int] | None = None
    text: TypeText | None = None


@dataclass
class Group:
    name: str
    children: list[Layer | Group] = field(default_factory=list)  # bottom to top


@dataclass
class LayeredPage:
    """One page as layers, bottom to top, at `size` pixels and `dpi`."""

    number: int
    size: tuple[int, int]
    dpi: int
    layers: list[Layer | Group]

    def walk(self):
        """Every layer, groups' contents included, bottom to top."""
        stack = list(reversed(self.layers))
        while stack:
            item = stack.pop()
            if isinstance(item, Group):
                stack.extend(reversed(item.children))
            else:
                yield item


def layered_page(comic: Comic, number: int, *, dpi: int = DPI) -> LayeredPage:
    """Page `number` (1-based) of `comic` as layers."""
    page = comic.pages[number - 1]
    width, height = page_size(dpi)
    layers: list[Layer | Group] = [
        Layer(gettext("Paper"), Image.new("RGBA", (width, height), "white"), 0, 0)
    ]
    boxes = cells(page, dpi)
    type_px = page_type_size(page, dpi)  # one type size across the page, as composed
    for index in page.panels:  # reading order
        layers.append(_panel(comic.arts[index], boxes[index], comic.direction, dpi, type_px))
    if page.number == 1 and one_line(comic.title):
        layers.append(_drawn(gettext("Title"), (width, height), (0, 0), _title(comic, dpi)))
    folio = _drawn(
        gettext("Folio"), (width, height), (0, 0), lambda im: draw_folio(im, page.number, dpi)
    )
    return LayeredPage(page.number, (width, height), dpi, [*layers, folio])


def _title(comic: Comic, dpi: int) -> Callable[[Image.Image], None]:
    return lambda image: draw_title(image, comic.title, dpi)


def _panel(
    art: PanelArt, box: tuple[int, int, int, int], direction: str, dpi: int, type_px: int
) -> Group:
    """One panel's group: art, sound effects, border, balloons and boxes, text."""
    x0, y0, x1, y1 = box
    size = (x1 - x0, y1 - y0)
    group = Group(gettext("Panel %(index)s") % {"index": art.index})
    if art.load is None:
        picture = placeholder(art.index, size)
        letterable = art.letterable
        group.children.append(Layer(gettext("Not drawn yet"), picture.convert("RGBA"), x0, y0))
    else:
        fitted = fit(art, size)
        picture = fitted.picture(size)
        letterable = fitted.letterable
        group.children.append(
            Layer(
                gettext("Art"),
                fitted.scaled.convert("RGBA"),
                x0 + fitted.x,
                y0 + fitted.y,
                mask=box,
            )
        )
    canvas = picture.convert("RGB")  # what the letterer sees: the art, then its sound effects
    vertical = languages.is_vertical(letterable.language)
    for effect in letterable.sfx:
        name = gettext("Sound effect: %(text)s") % {"text": _short(effect.text)}
        group.children.append(
            _drawn(name, size, (x0, y0), lambda im, e=effect: draw_sound_effect(im, e, vertical))
        )
        draw_sound_effect(canvas, effect, vertical)
    group.children.append(_border(box, dpi))
    placed = arrange(canvas, panel=letterable, direction=direction, type_size=type_px)
    for n, item in _numbered(placed):
        group.children.append(
            _drawn(_name(item, n), size, (x0, y0), lambda im, p=item: paint_outline(im, p))
        )
    for item in placed:
        group.children.extend(_text_layers(item, (x0, y0), size))
    return group


def _numbered(placed: list[Arranged]):
    """Each item with its line's number among the panel's dialogue (a caption has none)."""
    n = 0
    for item in placed:
        n += item.kind != "caption"
        yield n, item


def _border(box: tuple[int, int, int, int], dpi: int) -> Layer:
    """The panel's border, as the page draws it: inside the cell, and on its far edges."""
    x0, y0, x1, y1 = box
    image = Image.new("RGBA", (x1 - x0 + 1, y1 - y0 + 1), (0, 0, 0, 0))
    ImageDraw.Draw(image).rectangle(
        (0, 0, x1 - x0, y1 - y0), outline=(0, 0, 0, 255), width=border_width(dpi)
    )
    return Layer(gettext("Border"), image, x0, y0)


def _name(item: Arranged, n: int) -> str:
    """A balloon's or box's layer name: what it is, who speaks, and the start of the line."""
    line = _short(item.line.text)
    if item.kind == "caption":
        return gettext("Caption: %(line)s") % {"line": line}
    if item.kind == "narration":
        return gettext("Narration %(n)s: %(line)s") % {"n": n, "line": line}
    speaker = item.line.speaker or pgettext("who speaks", "someone")
    return gettext("Balloon %(n)s · %(speaker)s: %(line)s") % {
        "n": n,
        "speaker": speaker,
        "line": line,
    }


def _text_layers(item: Arranged, corner: tuple[int, int], size) -> list[Layer]:
    """The item's text: its hidden raster copy, and over it the editable type layer (the
    same pixels)."""
    drawn = _drawn("", size, corner, lambda im: paint_text(im, item))
    line = _short(item.line.text)
    name = f"{item.line.speaker}: {line}" if item.line.speaker else line
    raster = Layer(
        gettext("%(name)s (raster copy)") % {"name": name},
        drawn.image,
        drawn.left,
        drawn.top,
        hidden=True,
    )
    typed = Layer(name, drawn.image, drawn.left, drawn.top, text=_type_text(item, corner))
    return [raster, typed]


def _type_text(item: Arranged, corner: tuple[int, int]) -> TypeText:
    """The type layer's text: the whole line, in the letterer's font and size, in a box
    around the block the letterer set (a little wider, so that a program setting it again
    wraps it as the page does), centred in a balloon, from the left in a box."""
    block = item.block
    x0, y0, x1, y1 = item.box
    size = block.font.size
    cx, cy = corner[0] + (x0 + x1) / 2, corner[1] + (y0 + y1) / 2
    if block.vertical:
        left, right = cx - block.text_w / 2, cx + block.text_w / 2
        box = (left, cy - block.text_h / 2, right, cy + block.text_h / 2 + size * 0.5)
    elif item.kind == "balloon":
        half = block.text_w / 2 + size * 0.5
        box = (cx - half, cy - block.text_h / 2, cx + half, cy + block.text_h / 2)
    else:
        left = corner[0] + x0 + size * 0.5
        box = (left, cy - block.text_h / 2, left + block.text_w + size, cy + block.text_h / 2)
    return TypeText(
        text=item.line.text,
        font=postscript_name(block.font),
        size=float(size),
        box=box,
        vertical=block.vertical,
        centred=item.kind == "balloon" and not block.vertical,
        bold=item.stroke > 0,
        color=item.ink,
    )


def _short(text: str) -> str:
    text = one_line(text)
    return text if len(text) <= NAME_CHARACTERS else text[: NAME_CHARACTERS - 1] + "…"


def _drawn(
    name: str,
    size: tuple[int, int],
    corner: tuple[int, int],
    paint: Callable[[Image.Image], None],
) -> Layer:
    """A layer of what `paint` draws on a picture of `size` placed at `corner` of the page:
    its colour and opacity read from what it draws on black and on white, cut to what it
    covers."""
    on_black, on_white = Image.new("RGB", size, "black"), Image.new("RGB", size, "white")
    paint(on_black)
    paint(on_white)
    # What was drawn on is where the two differ from black against white (found in C;
    # the arithmetic below is for those pixels only).
    bbox = ImageChops.invert(ImageChops.difference(on_black, on_white)).getbbox()
    if bbox is None:  # nothing drawn: a pixel, transparent
        return Layer(name, Image.new("RGBA", (1, 1), (0, 0, 0, 0)), corner[0], corner[1])
    black = np.asarray(on_black.crop(bbox), dtype=np.float32)
    white = np.asarray(on_white.crop(bbox), dtype=np.float32)
    # Drawn over a background b with opacity a and colour c, a pixel is b(1-a) + ca: on
    # black, ca; on white, 255(1-a) + ca. Their difference is 255(1-a).
    alpha = np.clip(255 - (white - black).mean(axis=2), 0, 255)
    color = np.where(alpha[..., None] > 0, black * 255 / np.maximum(alpha, 1)[..., None], 0)
    rgba = np.dstack([np.clip(np.rint(color), 0, 255), np.rint(alpha)]).astype(np.uint8)
    image = Image.fromarray(rgba, "RGBA")
    return Layer(name, image, corner[0] + bbox[0], corner[1] + bbox[1])
