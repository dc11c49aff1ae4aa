"""A region of a picture: the one canonical mask, its forms for each provider, and the
composite that keeps every pixel outside it.

The canonical mask is a PNG in mode "L" at the picture's size: 255 where the region is
drawn again, 0 where the picture is kept. A box (fractions 0–1 of the picture, from its
top left) and a person's painted mask (any size, any mode: white = redraw) both become
one. Providers disagree on polarity (white is redrawn on AUTOMATIC1111 and FLUX Fill,
transparent on OpenAI's /images/edits, black on some others): an adapter converts the
canonical mask with `provider_mask`, and nothing else ever sees another polarity.

`composite` puts a provider's picture back into the original through the mask, feathered
outward by at most FEATHER of the picture's longer side: past the feather every pixel is
the original's, whatever the provider did to the rest (many inpaint models re-encode the
whole picture and shift its colours).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from enum import StrEnum

from PIL import Image, ImageFilter, UnidentifiedImageError

FEATHER = 0.02  # of the picture's longer side, at most
THRESHOLD = 128  # a painted mask's grey at or above this is "redraw"
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


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _open(data: bytes) -> Image.Image:
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


def box_mask(box: Sequence[float], *, width: int, height: int) -> bytes:
    """The canonical mask of a box `[x, y, w, h]` (fractions 0–1 of the picture, from its
    top left). Raises MaskError for a box outside 0–1, empty, or the whole picture."""
    if len(box) != 4:
        raise MaskError("A box is four numbers: [x, y, width, height].")
    try:
        x, y, w, h = (float(v) for v in box)
    except (TypeError, ValueError) as exc:
        raise MaskError("A box is four numbers: [x, y, width, height].") from exc
    if not all(0.0 <= v <= 1.0 for v in (x, y, w, h)) or x + w > 1.0 + 1e-9 or y + h > 1.0 + 1e-9:
        raise MaskError("The box must lie inside the picture (fractions from 0 to 1).")
    left, top = round(x * width), round(y * height)
    right, bottom = round((x + w) * width), round((y + h) * height)
    mask = Image.new("L", (width, height), 0)
    if right > left and bottom > top:
        mask.paste(255, (left, top, right, bottom))
    return checked(_png(mask))


def painted_mask(data: bytes, *, width: int, height: int) -> bytes:
    """The canonical mask of a person's painted mask: any size (scaled to the picture),
    white (or any light grey) = redraw; a transparent pixel counts as "keep". Raises
    MaskError when it is not a picture, empty, or covers the whole picture."""
    image = _open(data)
    if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        grey = Image.new("L", rgba.size, 0)
        grey.paste(rgba.convert("L"), mask=rgba.getchannel("A"))
    else:
        grey = image.convert("L")
    grey = grey.resize((width, height), Image.Resampling.BILINEAR)
    mask = grey.point(lambda v: 255 if v >= THRESHOLD else 0)
    return checked(_png(mask))


def checked(mask: bytes) -> bytes:
    """The mask itself, if it marks some but not all of the picture."""
    image = _open(mask).convert("L")
    low, high = image.getextrema()
    if high < THRESHOLD:
        raise MaskError("The region is empty: mark the part of the picture to draw again.")
    if low >= THRESHOLD:
        raise MaskError("The region covers the whole picture: use Redo to draw it all again.")
    return mask


def bounds(mask: bytes) -> tuple[float, float, float, float]:
    """The box around the region, as fractions `(x, y, w, h)` of the picture."""
    image = _open(mask).convert("L")
    left, top, right, bottom = image.point(lambda v: 255 if v >= THRESHOLD else 0).getbbox()
    return (
        left / image.width,
        top / image.height,
        (right - left) / image.width,
        (bottom - top) / image.height,
    )


def scaled(mask: bytes, *, width: int, height: int) -> bytes:
    """The canonical mask at another size (a provider's), still only 0 and 255."""
    image = _open(mask).convert("L")
    if image.size == (width, height):
        return mask
    resized = image.resize((width, height), Image.Resampling.BILINEAR)
    return _png(resized.point(lambda v: 255 if v >= THRESHOLD else 0))


def scaled_picture(picture: bytes, *, width: int, height: int) -> bytes:
    """A picture as a PNG at width×height (a provider's size), for a touch-up's request."""
    image = _open(picture).convert("RGB")
    if image.size == (width, height):
        return _png(image)
    return _png(image.resize((width, height), Image.Resampling.LANCZOS))


def provider_mask(
    mask: bytes, polarity: Polarity, *, width: int | None = None, height: int | None = None
) -> bytes:
    """The canonical mask as a provider reads it (a PNG), at `width`×`height` if given:
    WHITE as it is, BLACK inverted, TRANSPARENT an RGBA picture, opaque black where the
    picture is kept and fully transparent where it is redrawn."""
    if width is not None and height is not None:
        mask = scaled(mask, width=width, height=height)
    image = _open(mask).convert("L")
    if polarity == Polarity.WHITE:
        return _png(image)
    if polarity == Polarity.BLACK:
        return _png(image.point(lambda v: 255 - v))
    rgba = Image.new("RGBA", image.size, (0, 0, 0, 255))
    rgba.putalpha(image.point(lambda v: 255 - v))
    return _png(rgba)


def feather_pixels(width: int, height: int) -> int:
    """How far outside the region the composite blends: FEATHER of the longer side."""
    return max(0, int(FEATHER * max(width, height)))


def blend_mask(mask: bytes, *, width: int, height: int) -> Image.Image:
    """The composite's alpha: 255 over the region, falling to 0 within
    `feather_pixels` outside it, exactly 0 beyond."""
    image = _open(mask).convert("L")
    if image.size != (width, height):
        image = image.resize((width, height), Image.Resampling.NEAREST)
    image = image.point(lambda v: 255 if v >= THRESHOLD else 0)
    feather = feather_pixels(width, height)
    half = feather // 2
    if half < 1:
        return image
    # Grown by `half` (3×3 max filters, much faster than one wide one), then a box blur
    # of radius `half`: the alpha reaches at most `2 * half <= feather` pixels past the
    # region and stays 255 over all of it.
    grown = image
    for _ in range(half):
        grown = grown.filter(ImageFilter.MaxFilter(3))
    return grown.filter(ImageFilter.BoxBlur(half))


def composite(original: bytes, drawn: bytes, mask: bytes) -> bytes:
    """`drawn` inside the region (feathered), `original` everywhere else, as a PNG at the
    original's size. `drawn` may come back at another size (a provider's): it is scaled
    to the original's first."""
    base = _open(original).convert("RGB")
    new = _open(drawn).convert("RGB")
    if new.size != base.size:
        new = new.resize(base.size, Image.Resampling.LANCZOS)
    alpha = blend_mask(mask, width=base.width, height=base.height)
    return _png(Image.composite(new, base, alpha))
