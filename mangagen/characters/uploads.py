"""A person's own reference image: checked, then re-encoded, before it is stored.

Refused (each with its UploadProblem): no file; more than
SHEET_UPLOAD_MAX_BYTES; bytes that are not a PNG, JPEG or WebP whatever the
file's name or declared type says (a "PNG" that is really HTML); sides
outside SHEET_UPLOAD_MIN_SIDE…SHEET_UPLOAD_MAX_SIDE, read from the header
before any pixel is decoded (a decompression bomb never gets decoded);
a file that does not decode to the end (truncated). What is kept is a fresh
PNG of the pixels alone: no metadata, nothing appended survives.
"""

from __future__ import annotations

import contextlib
import io
import struct
import warnings

from django.conf import settings
from django.utils.translation import gettext
from PIL import Image, ImageOps

from .errors import Refused
from .models import UploadProblem

# The formats accepted, by the bytes they start with (never by name or declared type).
SIGNATURES = {
    "PNG": (b"\x89PNG\r\n\x1a\n",),
    "JPEG": (b"\xff\xd8\xff",),
    "WEBP": (b"RIFF",),
}
# Pictures, but not of a kind taken here.
OTHER_PICTURES = (b"GIF87a", b"GIF89a", b"BM", b"II*\x00", b"MM\x00*", b"\x00\x00\x01\x00")
KEPT_SIDE = 1024  # a reference larger than this is scaled down when stored


@contextlib.contextmanager
def _refused_unless_read(problem: UploadProblem, message: str):
    """Pillow's failures inside as Refused: a decompression bomb (its warning, made an
    error by the caller, or its error) as BOMB, a file it cannot read as `problem`
    with `message`."""
    try:
        yield
    except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        raise Refused(
            UploadProblem.BOMB, gettext("The picture would decode to too many pixels.")
        ) from exc
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise Refused(problem, message) from exc


def _sniff(head: bytes) -> str | None:
    for name, prefixes in SIGNATURES.items():
        if any(head.startswith(p) for p in prefixes):
            if name == "WEBP" and head[8:12] != b"WEBP":
                continue
            return name
    return None


def checked_reference(upload) -> bytes:
    """The uploaded file (a Django UploadedFile, or None) as clean PNG bytes. Raises Refused."""
    if upload is None:
        raise Refused(
            UploadProblem.MISSING, gettext("Send the picture as the multipart field `image`.")
        )
    limit = settings.SHEET_UPLOAD_MAX_BYTES
    if upload.size is not None and upload.size > limit:
        raise Refused(
            UploadProblem.TOO_LARGE,
            gettext("The file is over %(mb)s MB; send a smaller one.")
            % {"mb": limit // (1024 * 1024)},
        )
    data = upload.read(limit + 1)
    if len(data) > limit:
        raise Refused(
            UploadProblem.TOO_LARGE,
            gettext("The file is over %(mb)s MB; send a smaller one.")
            % {"mb": limit // (1024 * 1024)},
        )
    return checked_bytes(data)


def checked_bytes(data: bytes) -> bytes:
    kind = _sniff(data[:16])
    if kind is None and data.startswith(OTHER_PICTURES):
        raise Refused(
            UploadProblem.UNSUPPORTED,
            gettext("Send a PNG, JPEG or WebP picture (GIF, BMP, TIFF are not taken)."),
        )
    if kind is None:
        raise Refused(
            UploadProblem.NOT_AN_IMAGE, gettext("That file is not a PNG, JPEG or WebP picture.")
        )
    with warnings.catch_warnings():
        # Pillow's own bomb check warns below its hard limit: here that is a refusal too.
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        with _refused_unless_read(
            UploadProblem.NOT_AN_IMAGE,
            gettext("That file is not a readable %(kind)s picture.") % {"kind": kind},
        ):
            image = Image.open(io.BytesIO(data), formats=[kind])
        _check_size(*image.size)  # from the header: nothing decoded yet
        # ImageFile.LOAD_TRUNCATED_IMAGES stays False: a short file fails here.
        with _refused_unless_read(
            UploadProblem.TRUNCATED,
            gettext("The picture is cut short or damaged; send the whole file."),
        ):
            image.load()
    try:
        image = ImageOps.exif_transpose(image)
    except (OSError, SyntaxError, ValueError, EOFError, struct.error) as exc:
        # A malformed EXIF block (Pillow reads it only here, for the orientation).
        raise Refused(
            UploadProblem.NOT_AN_IMAGE,
            gettext("That %(kind)s picture's EXIF data is damaged.") % {"kind": kind},
        ) from exc
    image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    image.thumbnail((KEPT_SIDE, KEPT_SIDE))
    # A new image of the pixels alone: the uploader's ICC profile, EXIF, XMP and text
    # chunks ride along in `info` through convert() and thumbnail(), and PNG's
    # encoder writes the profile back out.
    pixels = Image.frombytes(image.mode, image.size, image.tobytes())
    buffer = io.BytesIO()
    pixels.save(buffer, format="PNG")
    return buffer.getvalue()


def _check_size(width: int, height: int) -> None:
    low, high = settings.SHEET_UPLOAD_MIN_SIDE, settings.SHEET_UPLOAD_MAX_SIDE
    if width * height > 8 * high * high:  # far past any real picture: a decompression bomb
        raise Refused(
            UploadProblem.BOMB,
            gettext("The picture claims %(width)s×%(height)s pixels; at most %(high)s×%(high)s.")
            % {"width": width, "height": height, "high": high},
        )
    if max(width, height) > high:
        raise Refused(
            UploadProblem.TOO_BIG,
            gettext("The picture is %(width)s×%(height)s pixels; each side at most %(high)s.")
            % {"width": width, "height": height, "high": high},
        )
    if min(width, height) < low:
        raise Refused(
            UploadProblem.TOO_SMALL,
            gettext("The picture is %(width)s×%(height)s pixels; each side at least %(low)s.")
            % {"width": width, "height": height, "low": low},
        )
