"""A layered page as a Photoshop document (PSD), written with psd-tools.

psd-tools (requirements.txt) writes the document: its header, resolution, layers, groups,
masks and pixels (RLE-compressed, by its C extension). A type layer is one of its pixel
layers given the type tool block of typetool.py, which no library writes. The merged
image a reader shows without compositing (a file browser's preview, a program that
cannot read layers) is the page as the reader shows it, not a composite of the layers.

Layer names are kept whole in Unicode (`luni`); the legacy Pascal name, Mac Roman only,
is `?` where the name has other characters, as Photoshop writes it.
"""

from __future__ import annotations

import io
from itertools import count

from PIL import Image
from psd_tools import PSDImage
from psd_tools.constants import Compression, Resource, Tag
from psd_tools.psd.image_resources import ImageResource, ResoulutionInfo
from psd_tools.psd.tagged_blocks import TaggedBlock

from .layers import Group, Layer, LayeredPage
from .typetool import type_tool_block

CONTENT_TYPE = "image/vnd.adobe.photoshop"
PIXELS_PER_INCH, CENTIMETRES = 1, 2  # ResolutionInfo's units: of the resolution, of the size


def psd_bytes(page: LayeredPage, *, merged: Image.Image) -> bytes:
    """The PSD of `page`; `merged` is the page's picture (its composite)."""
    document = PSDImage.new("RGBA", page.size, color=(255, 255, 255, 255))
    fixed = round(page.dpi * 65536)  # 16.16 fixed point
    document.image_resources[Resource.RESOLUTION_INFO] = ImageResource(
        key=Resource.RESOLUTION_INFO,
        data=ResoulutionInfo(
            fixed, PIXELS_PER_INCH, CENTIMETRES, fixed, PIXELS_PER_INCH, CENTIMETRES
        ),
    )
    type_index = count()
    for item in page.layers:
        _add(document, item, type_index)
    header = document._record.header
    header.channels = 3  # the merged image is opaque: red, green, blue
    pixels = merged.convert("RGB")
    document._record.image_data.compression = Compression.RLE
    document._record.image_data.set_data([band.tobytes() for band in pixels.split()], header)
    target = io.BytesIO()
    # Written as built, through psd-tools' document record (pinned: requirements.txt):
    # PSDImage.save() would composite the layers again for the merged image, and set it
    # to psd-tools' composite rather than the page.
    document._record.write(target)
    return target.getvalue()


def _add(parent, item: Layer | Group, type_index) -> None:
    if isinstance(item, Group):
        group = parent.create_group(name="group")
        group.name = item.name  # through the setter: a Unicode name
        for child in item.children:
            _add(group, child, type_index)
        return
    layer = parent.create_pixel_layer(item.image, name="layer", top=item.top, left=item.left)
    layer.name = item.name
    layer.visible = not item.hidden
    if item.mask is not None:
        _mask(layer, item)
    if item.text is not None:
        data = type_tool_block(item.text, index=next(type_index))
        layer.tagged_blocks[Tag.TYPE_TOOL_OBJECT_SETTING] = TaggedBlock(
            key=Tag.TYPE_TOOL_OBJECT_SETTING, data=data
        )


def _mask(layer, item: Layer) -> None:
    """A mask as large as the layer, white within `item.mask`: what the layer shows."""
    x0, y0, x1, y1 = item.mask
    mask = Image.new("L", item.image.size, 0)
    mask.paste(255, (x0 - item.left, y0 - item.top, x1 - item.left, y1 - item.top))
    layer.create_mask(mask, top=item.top, left=item.left)
