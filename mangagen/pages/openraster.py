"""A layered page as an OpenRaster file (`.ora`, Krita's and MyPaint's open format).

A ZIP: `mimetype` first and uncompressed, `stack.xml` (the layers, top first, each a PNG
at its place; groups as nested stacks), the PNGs under `data/`, the page's picture as
`mergedimage.png` and a thumbnail. OpenRaster has no masks and no type layers: the art is
cut to its cell, and the text is its pixels (the PSD's hidden raster copies would only
repeat them).
"""

from __future__ import annotations

import io
import zipfile
from xml.sax.saxutils import quoteattr

from PIL import Image

from .layers import Group, Layer, LayeredPage

CONTENT_TYPE = "image/openraster"
THUMBNAIL = 256  # the format's largest thumbnail side


def ora_bytes(page: LayeredPage, *, merged: Image.Image) -> bytes:
    """The OpenRaster file of `page`; `merged` is the page's picture."""
    target = io.BytesIO()
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), CONTENT_TYPE, zipfile.ZIP_STORED)
        files: list[tuple[str, Layer]] = []
        stack = _stack(list(page.layers), files)
        width, height = page.size
        archive.writestr(
            "stack.xml",
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<image version="0.0.5" w="{width}" h="{height}" '
            f'xres="{page.dpi}" yres="{page.dpi}"><stack>{stack}</stack></image>\n',
        )
        for path, layer in files:  # PNGs are compressed already
            archive.writestr(path, _png(_shown(layer)), zipfile.ZIP_STORED)
        archive.writestr("mergedimage.png", _png(merged.convert("RGB")), zipfile.ZIP_STORED)
        thumbnail = merged.convert("RGB")
        thumbnail.thumbnail((THUMBNAIL, THUMBNAIL))
        archive.writestr("Thumbnails/thumbnail.png", _png(thumbnail), zipfile.ZIP_STORED)
    return target.getvalue()


def _stack(items: list[Layer | Group], files: list[tuple[str, Layer]]) -> str:
    """The elements of `items` (bottom to top) as stack.xml lists them: top first."""
    elements = []
    for item in reversed(items):
        if isinstance(item, Group):
            inner = _stack(item.children, files)
            elements.append(f"<stack name={quoteattr(item.name)}>{inner}</stack>")
        elif not item.hidden:  # the hidden ones are the text's raster copies
            path = f"data/layer-{len(files) + 1:03d}.png"
            files.append((path, item))
            x, y = _shown_at(item)
            elements.append(
                f"<layer name={quoteattr(item.name)} src={quoteattr(path)} "
                f'x="{x}" y="{y}" visibility="visible"/>'
            )
    return "".join(elements)


def _shown_at(layer: Layer) -> tuple[int, int]:
    if layer.mask is None:
        return layer.left, layer.top
    return layer.mask[0], layer.mask[1]


def _shown(layer: Layer) -> Image.Image:
    """The layer's pixels as it shows them: a masked layer cut to its mask."""
    if layer.mask is None:
        return layer.image
    x0, y0, x1, y1 = layer.mask
    return layer.image.crop((x0 - layer.left, y0 - layer.top, x1 - layer.left, y1 - layer.top))


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()
