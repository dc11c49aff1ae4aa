"""Every provider's picture comes in one way (mangagen/renderers/intake.py): only
from allowed hosts, capped in bytes while it streams, PNG/JPEG/WebP only, never a
decompression bomb decoded, and re-encoded as a fresh PNG. A test per refusal, over
real HTTP to a local server."""

from __future__ import annotations

import base64
import io
import socket
import struct
import threading
import time
import zlib

import pytest
from PIL import Image, PngImagePlugin

from mangagen.renderers import RenderError
from mangagen.renderers.intake import Intake, host_of
from tests.support.providers.base import Reply, StandIn


def picture(fmt: str = "PNG", size=(40, 30), **options) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (10, 200, 30)).save(buffer, format=fmt, **options)
    return buffer.getvalue()


def bomb() -> bytes:
    """A valid PNG header claiming 60000×60000 pixels: tiny to send, ruinous to decode."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 60000, 60000, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 100))
    )


@pytest.fixture
def files():
    """A server of pictures at /<name>; `files.store[name] = Reply(...)`."""
    standin = StandIn()
    standin.store = {}
    standin.route("GET", r"/(?P<name>[^/]+)", lambda r: standin.store[r.match["name"]])
    with standin:
        yield standin


def intake(files, **extra) -> Intake:
    options = {"hosts": (host_of(files.url),), "max_bytes": 100_000, "timeout": 5}
    return Intake(**options | extra)


def test_a_picture_from_the_providers_host_is_kept_as_a_fresh_png(files):
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "from the provider")
    files.store["a.webp"] = Reply(raw=picture("WEBP"), content_type="image/webp")
    files.store["b.png"] = Reply(raw=picture("PNG", pnginfo=info) + b"trailing bytes")
    kept = intake(files).fetch(f"{files.url}/a.webp")
    assert kept.png.startswith(b"\x89PNG") and (kept.width, kept.height) == (40, 30)
    clean = intake(files).fetch(f"{files.url}/b.png")
    assert b"from the provider" not in clean.png and not clean.png.endswith(b"trailing bytes")


@pytest.mark.parametrize(
    "url",
    [
        "http://evil.example/a.png",
        "http://127.0.0.1:9/a.png",  # the provider's host, another port
        "ftp://127.0.0.1/a.png",
        "file:///etc/passwd",
    ],
)
def test_a_picture_from_any_other_host_is_never_fetched(files, url):
    with pytest.raises(RenderError, match="not allowed to fetch from") as refused:
        intake(files).fetch(url)
    assert not refused.value.retryable
    assert files.requests == []


def test_patterns_allow_a_providers_delivery_subdomains():
    delivery = Intake(hosts=("replicate.delivery", "*.replicate.delivery"), max_bytes=1, timeout=1)
    assert delivery.allowed("https://replicate.delivery/xezq/out-0.webp")
    assert delivery.allowed("https://pbxt.replicate.delivery/out-0.webp")
    assert not delivery.allowed("https://replicate.delivery.evil.example/out-0.webp")
    assert not delivery.allowed("https://evilreplicate.delivery/out-0.webp")


def test_a_redirect_is_not_followed(files):
    files.store["moved.png"] = Reply(302, raw=b"", headers={"Location": "http://evil.example/x"})
    with pytest.raises(RenderError, match="redirects elsewhere"):
        intake(files).fetch(f"{files.url}/moved.png")


def test_too_many_bytes_are_refused_by_their_declared_length(files):
    files.store["big.png"] = Reply(raw=b"\x89PNG" + b"\0" * 200_000)
    with pytest.raises(RenderError, match="over 100000 bytes") as refused:
        intake(files).fetch(f"{files.url}/big.png")
    assert not refused.value.retryable


def test_too_many_bytes_are_cut_off_while_they_stream(files):
    """A server that declares no length (chunked) is stopped once past the cap."""
    files.store["big.png"] = Reply(raw=b"\x89PNG" + b"\0" * 300_000, chunked=True)
    with pytest.raises(RenderError, match="over 100000 bytes") as refused:
        intake(files).fetch(f"{files.url}/big.png")
    assert not refused.value.retryable


@pytest.mark.parametrize(
    "data",
    [picture("GIF"), picture("BMP"), picture("TIFF"), b"<html>not a picture</html>"],
    ids=["gif", "bmp", "tiff", "html"],
)
def test_only_png_jpeg_and_webp_are_taken(files, data):
    with pytest.raises(RenderError, match="not a whole PNG, JPEG or WebP"):
        intake(files).picture(data)


def test_a_decompression_bomb_is_never_decoded(files):
    with pytest.raises(RenderError, match=r"too many pixels|over 40 megapixels"):
        intake(files).picture(bomb())


def test_a_cut_off_picture_is_no_render(files):
    with pytest.raises(RenderError, match="not a whole PNG, JPEG or WebP") as refused:
        intake(files).picture(picture("PNG", size=(400, 300))[:200])
    assert refused.value.retryable  # the provider may send it whole next time


def test_inline_base64_and_data_urls(files):
    taker = intake(files)
    encoded = base64.b64encode(picture("JPEG")).decode()
    assert taker.inline(encoded).png.startswith(b"\x89PNG")
    assert taker.inline("data:image/jpeg;base64," + encoded).width == 40
    with pytest.raises(RenderError, match="not valid base64"):
        taker.inline("not base64 at all!")
    with pytest.raises(RenderError, match="over 100000 bytes"):
        taker.inline("A" * 200_000)


def test_a_content_length_that_is_not_a_number_is_a_failed_render(files):
    files.store["odd.png"] = Reply(raw=picture(), chunked=True, headers={"Content-Length": "lots"})
    with pytest.raises(RenderError, match="not a number of bytes"):
        intake(files).fetch(f"{files.url}/odd.png")


@pytest.fixture
def dripping():
    """A server that sends a picture's bytes one every 20 ms (well inside any timeout
    between bytes) for thirty seconds; `dripping.finished` once it sent them all."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    stop, finished = threading.Event(), threading.Event()

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n"
                b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            )
            ends = time.monotonic() + 30
            try:
                while time.monotonic() < ends and not stop.is_set():
                    connection.sendall(b"1\r\n\0\r\n")
                    stop.wait(0.02)
                connection.sendall(b"0\r\n\r\n")
                finished.set()
            except OSError:
                pass  # the client gave up: what the test waits for

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    yield url, finished
    stop.set()
    server.join(timeout=10)
    listener.close()


def test_a_download_has_one_deadline_however_slowly_its_bytes_come(dripping):
    """Each byte comes long before the timeout, so only a deadline for the whole
    download stops it (RENDER_IMAGE_DOWNLOAD_SECONDS)."""
    url, finished = dripping
    taker = Intake(hosts=(host_of(url),), max_bytes=100_000, timeout=5, deadline=0.5)
    with pytest.raises(RenderError, match=r"took over 0\.5 s to download") as late:
        taker.download(f"{url}/slow.png")
    assert not finished.is_set(), "stopped while the bytes still came"
    assert late.value.retryable
