"""A region of a picture a person marks for a touch-up: the one canonical mask made from
what they marked, and the composite that keeps every pixel outside it.

A box (fractions 0–1 of the picture, from its top left) and a person's painted mask (any
size, any mode: white = redraw) both become the canonical mask of the renderer contract
(mangagen/renderers/masks.py: 255 where the region is drawn again, 0 where the picture
is kept; its bounds and size are read there too, and each provider's form made).

`composite` puts a provider's picture back into the original through the mask, feathered
outward by at most FEATHER of the picture's longer side: past the feather every pixel is
the original's, whatever the provider did to the rest (many inpaint models re-encode the
whole picture and shift its colours).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from PIL import Image, ImageFilter

from mangagen.renderers.masks import THRESHOLD, MaskError, bounds, opened, png, size_of

__all__ = [
    "FEATHER",
    "MaskError",
    "blend_mask",
    "bounds",
    "box_mask",
    "checked",
    "composite",
    "feather_pixels",
    "painted_mask",
    "size_of",
]

FEATHER = 0.02  # of the picture's longer side, at most


def box_mask(box: Sequence[float], *, width: int, height: int) -> bytes:
    """The canonical mask of a box `[x, y, w, h]` (fractions 0–1 of the picture, from its
    top left). Raises MaskError for a box outside 0–1, empty, or the whole picture."""
    if len(box) != 4:
        raise MaskError("A box is four numbers: [x, y, width, height].")
    try:
        x, y, w, h = (float(v) for v in box)
    except (TypeError, ValueError, OverflowError) as exc:  # OverflowError: a 400-digit number
        raise MaskError("A box is four numbers: [x, y, width, height].") from exc
    if not all(0.0 <= v <= 1.0 for v in (x, y, w, h)) or x + w > 1.0 + 1e-9 or y + h > 1.0 + 1e-9:
        raise MaskError("The box must lie inside the picture (fractions from 0 to 1).")
    left, top = round(x * width), round(y * height)
    right, bottom = round((x + w) * width), round((y + h) * height)
    mask = Image.new("L", (width, height), 0)
    if right > left and bottom > top:
        mask.paste(255, (left, top, right, bottom))
    return checked(png(mask))


def painted_mask(data: bytes, *, width: int, height: int) -> bytes:
    """The canonical mask of a person's painted mask: any size (scaled to the picture),
    white (or any light grey) = redraw; a transparent pixel counts as "keep". Raises
    MaskError when it is not a picture, empty, or covers the whole picture."""
    image = opened(data)
    if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        grey = Image.new("L", rgba.size, 0)
        grey.paste(rgba.convert("L"), mask=rgba.getchannel("A"))
    else:
        grey = image.convert("L")
    grey = grey.resize((width, height), Image.Resampling.BILINEAR)
    mask = grey.point(lambda v: 255 if v >= THRESHOLD else 0)
    return checked(png(mask))


def checked(mask: bytes) -> bytes:
    """The mask itself, if it marks some but not all of the picture."""
    image = opened(mask).convert("L")
    low, high = cast(tuple[int, int], image.getextrema())  # one band: its two ends
    if high < THRESHOLD:
        raise MaskError("The region is empty: mark the part of the picture to draw again.")
    if low >= THRESHOLD:
        raise MaskError("The region covers the whole picture: use Redo to draw it all again.")
    return mask


def feather_pixels(width: int, height: int) -> int:
    """How far outside the region the composite blends: FEATHER of the longer side."""
    return max(0, int(FEATHER * max(width, height)))


def blend_mask(mask: bytes, *, width: int, height: int) -> Image.Image:
    """The composite's alpha: 255 over the region, falling to 0 within
    `feather_pixels` outside it, exactly 0 beyond."""
    image = opened(mask).convert("L")
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
    base = opened(original).convert("RGB")
    new = opened(drawn).convert("RGB")
    if new.size != base.size:
        new = new.resize(base.size, Image.Resampling.LANCZOS)
    alpha = blend_mask(mask, width=base.width, height=base.height)
    return png(Image.composite(new, base, alpha))
