"""A person's own reference image: checked by its bytes, refused with the problem named."""

import io
import struct
import zlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
from PIL import Image

from mangagen.characters.models import CharacterSheet

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("instant_renders"),
    pytest.mark.board(characters=[{"name": "Aiko", "description": "red scarf"}], panels=[]),
]


@pytest.fixture
def put(client, user, board):
    client.force_login(user)

    def go(data: bytes | None, name="aiko.png", content_type="image/png"):
        fields = {}
        if data is not None:
            fields["image"] = SimpleUploadedFile(name, data, content_type=content_type)
        body = encode_multipart(BOUNDARY, fields)
        return client.put(
            f"/api/storyboards/{board.pk}/characters/Aiko/sheet/",
            data=body,
            content_type=MULTIPART_CONTENT,
        )

    return go


def picture(fmt="PNG", size=(256, 320), mode="RGB", **options) -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, size, (30, 60, 90) if mode == "RGB" else 90).save(buffer, format=fmt, **options)
    return buffer.getvalue()


def png_claiming(width: int, height: int) -> bytes:
    """A tiny, well-formed PNG whose header claims width × height pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 1024))
        + chunk(b"IEND", b"")
    )


def refused(response, problem: str) -> None:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"] == problem and body["detail"]
    assert not CharacterSheet.objects.exists()


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP"])
def test_png_jpeg_and_webp_are_taken_and_stored_as_a_clean_png(put, fmt):
    response = put(picture(fmt), name=f"aiko.{fmt.lower()}")
    assert response.status_code == 200, response.content
    stored = CharacterSheet.objects.get()
    with stored.image.open("rb") as handle:
        data = handle.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert Image.open(io.BytesIO(data)).size == (256, 320)


def test_what_rides_along_in_a_picture_is_not_kept(put):
    polyglot = picture() + b"<html><script>alert(1)</script></html>"
    assert put(polyglot).status_code == 200
    with CharacterSheet.objects.get().image.open("rb") as handle:
        assert b"<script>" not in handle.read()


def test_a_big_picture_is_scaled_down_when_kept(put):
    assert put(picture(size=(2000, 1500))).status_code == 200
    with CharacterSheet.objects.get().image.open("rb") as handle:
        assert max(Image.open(handle).size) == 1024


def test_no_file(put):
    refused(put(None), "missing_image")


def test_a_png_that_is_really_html(put):
    refused(put(b"<!doctype html><html><body>hi</body></html>"), "not_an_image")


def test_a_file_that_is_not_a_picture_at_all(put):
    refused(put(b"\x00" * 400, name="aiko.jpg", content_type="image/jpeg"), "not_an_image")


def test_a_gif_is_not_taken(put):
    refused(put(picture("GIF", mode="L"), name="aiko.gif"), "unsupported_type")


def test_a_file_over_the_size_limit(put, settings):
    settings.SHEET_UPLOAD_MAX_BYTES = 2048
    refused(put(picture(size=(800, 800), mode="RGB", compress_level=0)), "file_too_large")


def test_too_small(put):
    refused(put(picture(size=(20, 400))), "image_too_small")


def test_too_big(put):
    refused(put(png_claiming(5000, 100)), "image_too_big")


def test_a_decompression_bomb_is_refused_from_its_header(put):
    refused(put(png_claiming(60000, 60000)), "decompression_bomb")


def test_a_truncated_picture(put):
    whole = picture(size=(300, 300), compress_level=0)
    refused(put(whole[: len(whole) // 2]), "truncated_image")


def test_a_truncated_jpeg(put):
    whole = picture("JPEG", size=(300, 300), quality=95)
    refused(put(whole[: len(whole) // 2]), "truncated_image")


def test_a_picture_with_damaged_exif_data(put):
    """Pillow reads the EXIF block only when turning the picture upright."""
    whole = picture()
    end = whole.rindex(b"IEND") - 4
    body = b"ZZ\x00*\x00\x00\x00\x08" + b"\x00" * 8  # not a TIFF header
    exif = struct.pack(">I", len(body)) + b"eXIf" + body
    exif += struct.pack(">I", zlib.crc32(b"eXIf" + body) & 0xFFFFFFFF)
    refused(put(whole[:end] + exif + whole[end:]), "not_an_image")


def test_a_png_signature_on_garbage(put):
    refused(put(b"\x89PNG\r\n\x1a\n" + b"garbage" * 50), "not_an_image")
