"""The one way a provider's picture comes in, for every renderer.

A picture given by URL is fetched only from the provider's own hosts (its
configured base URL's, its delivery hosts, and `RENDER_IMAGE_HOSTS`), over
http(s), without following redirects, streamed and cut off past
`RENDER_IMAGE_MAX_BYTES` or past `RENDER_IMAGE_DOWNLOAD_SECONDS` in all (the
timeout bounds each wait for a byte; a host dripping bytes slower than that
would otherwise hold the render forever). A `Content-Length` that is not a
number fails the render like any other bad answer. Any picture, fetched or
sent inline, must be a PNG, JPEG or WebP by its own bytes (Pillow is told to
try no other format), at most `MAX_PIXELS` by its header (read before any pixel is decoded: a
decompression bomb is never decoded), and decode to the end (a cut-off one is
no render). What is kept is a fresh PNG of the pixels: nothing else the
provider sent (metadata, trailing bytes, another format) survives.
"""

from __future__ import annotations

import base64
import binascii
import io
import time
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from urllib.parse import urlsplit

import requests
from PIL import Image

from .base import RenderError, RenderResult
from .provider_http import declared_length

FORMATS = ("PNG", "JPEG", "WEBP")
MAX_PIXELS = 40_000_000  # 40 megapixels: far beyond any panel, far below a bomb
CHUNK = 64 * 1024
DOWNLOAD_SECONDS = 120.0  # one download in all, however slowly the bytes come


@dataclass(frozen=True)
class Picture:
    """A provider's picture as it is kept: PNG bytes and its size."""

    png: bytes
    width: int
    height: int

    def result(
        self, *, renderer: str, seconds: float, cold: bool | None, metadata: dict
    ) -> RenderResult:
        """The render this picture is."""
        return RenderResult(
            image=self.png,
            content_type="image/png",
            width=self.width,
            height=self.height,
            renderer=renderer,
            seconds=seconds,
            cold=cold,
            metadata=metadata,
        )


def host_of(url: str) -> str:
    """The `host[:port]` a URL names, lower-cased ("" if it names none)."""
    return urlsplit(url).netloc.lower().rsplit("@", 1)[-1]


class Intake:
    """Takes pictures in from one provider. `hosts` are the hosts (`host` or
    `host:port`, or patterns such as `*.replicate.delivery`) a picture may be
    fetched from."""

    def __init__(
        self,
        *,
        hosts: Iterable[str],
        max_bytes: int,
        timeout: float,
        session: requests.Session | None = None,
        headers: dict[str, str] | None = None,
        deadline: float = DOWNLOAD_SECONDS,
    ):
        self.hosts = tuple(h.strip().lower() for h in hosts if h and h.strip())
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.deadline = deadline
        self.session = session or requests.Session()
        self.headers = headers or {}

    def allowed(self, url: str) -> bool:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return False
        netloc, hostname = host_of(url), parts.hostname.lower()
        return any(fnmatchcase(netloc, h) or fnmatchcase(hostname, h) for h in self.hosts)

    def fetch(self, url: str) -> Picture:
        """The picture at `url`. Raises RenderError (a host not allowed, too many bytes,
        not a picture taken here)."""
        return self.picture(self.download(url))

    def download(self, url: str) -> bytes:
        """The bytes at `url`, at most `max_bytes` of them, from an allowed host only,
        within `deadline` seconds in all (give or take one wait of `timeout`)."""
        if not self.allowed(url):
            raise RenderError(
                f"The image provider answered with a picture at {(host_of(url) or url)!r}, "
                "a host it is not allowed to fetch from (RENDER_IMAGE_HOSTS).",
                retryable=False,
            )
        started = time.monotonic()
        try:
            with self.session.get(
                url,
                headers=self.headers,
                timeout=self.timeout,
                stream=True,
                allow_redirects=False,
            ) as response:
                if 300 <= response.status_code < 400:
                    raise RenderError(
                        f"The picture at {url} redirects elsewhere ({response.status_code}); "
                        "redirects are not followed.",
                        retryable=False,
                    )
                response.raise_for_status()
                declared = declared_length(response)
                if declared is not None and declared > self.max_bytes:
                    raise self._too_big()
                body = bytearray()
                for chunk in response.iter_content(CHUNK):
                    body += chunk
                    if len(body) > self.max_bytes:
                        raise self._too_big()
                    if time.monotonic() - started > self.deadline:
                        raise RenderError(
                            f"The picture took over {self.deadline:g} s to download "
                            f"({len(body)} bytes so far; RENDER_IMAGE_DOWNLOAD_SECONDS).",
                            retryable=True,
                        )
        except requests.RequestException as exc:
            raise RenderError(f"Could not download the picture: {exc}", retryable=True) from exc
        return bytes(body)

    def inline(self, encoded: str) -> Picture:
        """A picture sent inline as base64 (or a `data:` URL of base64)."""
        if encoded.startswith("data:"):
            encoded = encoded.partition(",")[2]
        if len(encoded) > self.max_bytes * 4 // 3 + 4:
            raise self._too_big()
        try:
            data = base64.b64decode(encoded, validate=True)
        except (ValueError, TypeError, binascii.Error) as exc:
            raise RenderError(
                "The image provider sent an image that is not valid base64.", retryable=True
            ) from exc
        return self.picture(data)

    def picture(self, data: bytes) -> Picture:
        """Checks the bytes and keeps a fresh PNG of their pixels. Raises RenderError."""
        if len(data) > self.max_bytes:
            raise self._too_big()
        with warnings.catch_warnings():
            # Pillow's own bomb check only warns below its hard limit: here it refuses.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            try:
                with Image.open(io.BytesIO(data), formats=FORMATS) as image:
                    width, height = image.size  # from the header: nothing decoded yet
                    if width * height > MAX_PIXELS:
                        raise RenderError(
                            f"The image provider sent a {width}×{height} picture, over "
                            f"{MAX_PIXELS // 1_000_000} megapixels.",
                            retryable=False,
                        )
                    image.load()  # the whole picture: a cut-off one is no render
                    clean = image.convert("RGBA" if "A" in image.getbands() else "RGB")
            except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
                raise RenderError(
                    "The image provider sent a picture that decodes to too many pixels.",
                    retryable=True,
                ) from exc
            except (OSError, ValueError, SyntaxError, EOFError) as exc:
                raise RenderError(
                    "The image provider sent bytes that are not a whole PNG, JPEG or WebP image.",
                    retryable=True,
                ) from exc
        buffer = io.BytesIO()
        clean.save(buffer, format="PNG")
        return Picture(png=buffer.getvalue(), width=width, height=height)

    def _too_big(self) -> RenderError:
        return RenderError(
            f"The image provider's picture is over {self.max_bytes} bytes "
            "(RENDER_IMAGE_MAX_BYTES).",
            retryable=False,
        )
