"""The one canonical mask of a region, as the renderer contract has it (`TouchUpSpec.mask`),
and its forms for each provider.

The canonical mask is a PNG in mode "L" at the picture's size: 255 where the region is
drawn again, 0 where the picture is kept (the studio makes it from what a person marks
and composites the provider's picture back through it: mangagen/jobs/regions.py).
Providers disagree on polarity (white is redrawn on AUTOMATIC1111 and FLUX Fill,
transparent on OpenAI's /images/edits, black on some others): an adapter converts the
canonical mask with `provider_mask`, and nothing else ever sees another polarity.
"""

from __future__ import annotations

import io
from enum import StrEnum

from PIL import Image, UnidentifiedImageError

THRESHOLD = 128  # a mask's grey at or above this is "redraw"
MAX_MASK_PIXELS = 40_000_000


class MaskError(ValueError):
    """A region that cannot be drawn: outside the picture, empty, the whole picture, or
    not a picture at all. The message is for the person."""


class Polarity(StrEnum):
    """How a provider reads a mask."""

    WHITE = "white"  # white is redrawn, black kept (AUTOMATIC1111, FLUX Fill, ComfyUI's
    # LoadImage mask from a greyscale picture)
    BLACK = "black"  # black is redrawn
    TRANSPARENT = "transparent"  # an RGBA picture whose transparent pixels are redrawn
    # (OpenAI's /images/edits)


def png(image: Image.Image) -> bytes:
    """A picture as PNG bytes."""
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def opened(data: bytes) -> Image.Image:
    """A mask (or picture) read, at most MAX_MASK_PIXELS; MaskError when it is none."""
    try:
        image = Image.open(io.BytesIO(data), formats=("PNG", "JPEG", "WEBP"))
        if image.width * image.height > MAX_MASK_PIXELS:
            raise MaskError("The mask is too large.")
        image.load()
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as exc:
        raise MaskError("The mask is not a PNG, JPEG or WebP picture.") from exc
    return image


def size_of(picture: bytes) -> tuple[int, int]:
    """A picture's width and height, from its header."""
    with Image.open(io.BytesIO(picture)) as image:
        return image.size


def bounds(mask: bytes) -> tuple[float, float, float, float]:
    """The box around the region, as fractions `(x, y, w, h)` of the picture."""
    image = opened(mask).convert("L")
    left, top, right, bottom = image.point(lambda v: 255 if v >= THRESHOLD else 0).getbbox()
    return (
        left / image.width,
        top / image.height,
        (right - left) / image.width,
        (bottom - top) / image.height,
    )


def scaled(mask: bytes, *, width: int, height: int) -> bytes:
    """The canonical mask at another size (a provider's), still only 0 and 255."""
    image = opened(mask).convert("L")
    if image.size == (width, height):
        return mask
    resized = image.resize((width, height), Image.Resampling.BILINEAR)
    return png(resized.point(lambda v: 255 if v >= THRESHOLD else 0))


def scaled_picture(picture: bytes, *, width: int, height: int) -> bytes:
    """A picture as a PNG at width×height (a provider's size), for a touch-up's request."""
    image = opened(picture).convert("RGB")
    if image.size == (width, height):
        return png(image)
    return png(image.resize((width, height), Image.Resampling.LANCZOS))


def covering(picture: bytes, *, width: int, height: int) -> bytes:
    """A picture as a PNG at width×height, scaled to cover it and cropped in the middle
    (a rough drawn for another cell's shape keeps its proportions)."""
    image = opened(picture).convert("RGB")
    if image.size == (width, height):
        return png(image)
    scale = max(width / image.width, height / image.height)
    size = (max(width, round(image.width * scale)), max(height, round(image.height * scale)))
    image = image.resize(size, Image.Resampling.LANCZOS)
    left, top = (image.width - width) // 2, (image.height - height) // 2
    return png(image.crop((left, top, left + width, top + height)))


def provider_mask(
    mask: bytes, polarity: Polarity, *, width: int | None = None, height: int | None = None
) -> bytes:
    """The canonical mask as a provider reads it (a PNG), at `width`×`height` if given:
    WHITE as it is, BLACK inverted, TRANSPARENT an RGBA picture, opaque black where the
    picture is kept and fully transparent where it is redrawn."""
    if width is not None and height is not None:
        mask = scaled(mask, width=width, height=height)
    image = opened(mask).convert("L")
    if polarity == Polarity.WHITE:
        return png(image)
    if polarity == Polarity.BLACK:
        return png(image.point(lambda v: 255 - v))
    rgba = Image.new("RGBA", image.size, (0, 0, 0, 255))
    rgba.putalpha(image.point(lambda v: 255 - v))
    return png(rgba)
