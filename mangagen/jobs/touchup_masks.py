"""A touch-up's region as the request brings it, made the one canonical mask
(mangagen/renderers/masks.py: mode "L" at the take's size, 255 = redraw) once the hold
is placed, with as little work as the region needs.

A painted mask is judged from its header before a pixel of it is decoded: a PNG, JPEG
or WebP no larger than the take it is painted over (the touch-up screen paints at the
take's own size), of the take's shape, and of at most MASK_MAX_PIXELS. Then it is
decoded once, brought to grey in as few copies as its mode allows, scaled to the
take, thresholded, and its bounds, emptiness and fullness read from that one image:
the PNG stored is encoded from it, never decoded again here. (A 168 KB PNG that
decoded to 40 Mpx, copied five ways and decoded thrice more, took a web process past
2 GB for six requests that then answered 402.)

The decoding is drawing on the request's thread, counted in the person's drawing
budget (mangagen/kernel/quotas.py) like a page build.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image, ImageChops, UnidentifiedImageError

from mangagen.kernel import quotas
from mangagen.renderers import masks

from . import regions

# A painted mask's pixels at most, whatever the take's size (a take is a render's size:
# a few megapixels).
MASK_MAX_PIXELS = 8_000_000
# How far a mask's shape may be from the take's (a canvas scaled to whole pixels).
ASPECT_TOLERANCE = 0.02
# CPU seconds a megapixel of mask is reckoned to cost (decoded, scaled, thresholded,
# encoded), for the drawing budget's reservation; what it really took is counted after.
SECONDS_PER_MEGAPIXEL = 0.05

FORMATS = ("PNG", "JPEG", "WEBP")


@dataclass(frozen=True)
class Region:
    """The canonical mask (a PNG) and the box around what it redraws, [x, y, w, h]."""

    png: bytes
    box: tuple[float, float, float, float]


def take_size(picture) -> tuple[int, int]:
    """A take's width and height, from its file's header (`picture`: an open file)."""
    with Image.open(picture) as image:
        return image.size


def box_region(box: Sequence, *, width: int, height: int, user_id: int) -> Region:
    """The region of a box [x, y, w, h] (fractions of the take). Raises MaskError."""
    with quotas.drawing(user_id=user_id, estimate=_estimate(width * height)):
        mask = Image.open(io.BytesIO(regions.box_mask(box, width=width, height=height)))
        mask.load()
        return _region(mask)


def painted_region(data: bytes, *, width: int, height: int, user_id: int) -> Region:
    """The region of a person's painted mask over a take of `width`×`height` (white, or
    any light grey, is redrawn; a transparent pixel is kept). Raises MaskError for a
    mask that is no picture, of another shape, larger than the take or than
    MASK_MAX_PIXELS (all from its header, nothing decoded), empty, or the whole take."""
    image = _opened(data)
    _check_size(image.size, take=(width, height))
    with quotas.drawing(user_id=user_id, estimate=_estimate(image.width * image.height)):
        try:
            grey = _grey(image)
        except (OSError, ValueError) as exc:  # a header that lied, truncated data
            raise masks.MaskError("The mask is not a PNG, JPEG or WebP picture.") from exc
        if grey.size != (width, height):
            grey = grey.resize((width, height), Image.Resampling.BILINEAR)
        return _region(grey.point(lambda v: 255 if v >= masks.THRESHOLD else 0))


def _opened(data: bytes) -> Image.Image:
    """The mask, its header read and nothing decoded."""
    try:
        return Image.open(io.BytesIO(data), formats=FORMATS)
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as exc:
        raise masks.MaskError("The mask is not a PNG, JPEG or WebP picture.") from exc


def _check_size(size: tuple[int, int], *, take: tuple[int, int]) -> None:
    (w, h), (tw, th) = size, take
    too_large = w < 1 or h < 1 or w > tw or h > th or w * h > MASK_MAX_PIXELS
    if too_large or abs((w / h) / (tw / th) - 1) > ASPECT_TOLERANCE:
        raise masks.MaskError("The mask is too large.")


def _grey(image: Image.Image) -> Image.Image:
    """The mask in mode "L", decoded once; where it is transparent, black (kept)."""
    if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        return ImageChops.multiply(rgba.convert("L"), rgba.getchannel("A"))
    return image.convert("L")  # decodes, and for "L" itself copies nothing more


def _region(mask: Image.Image) -> Region:
    """Checks the thresholded mask (some, not all, of the take) and encodes it."""
    mask = mask.convert("L")
    extrema = mask.getextrema()  # one band: (lowest, highest)
    low, high = int(extrema[0]), int(extrema[1])  # type: ignore[arg-type]
    if high < masks.THRESHOLD:
        raise masks.MaskError("The region is empty: mark the part of the picture to draw again.")
    if low >= masks.THRESHOLD:
        raise masks.MaskError(
            "The region covers the whole picture: use Redo to draw it all again."
        )
    left, top, right, bottom = mask.getbbox() or (0, 0, 0, 0)  # not empty: checked above
    box = (
        left / mask.width,
        top / mask.height,
        (right - left) / mask.width,
        (bottom - top) / mask.height,
    )
    out = io.BytesIO()
    mask.save(out, format="PNG")
    return Region(out.getvalue(), box)


def _estimate(pixels: int) -> float:
    return max(pixels / 1e6 * SECONDS_PER_MEGAPIXEL, 0.01)
