"""HTTP to an image provider, with the rules every adapter shares.

- A connection refused or reset, or a timeout: tried again with exponential
  backoff (`backoff`, twice as long each time), at most `retries` more times.
- 5xx: the same. 429: again after the provider's `Retry-After` (seconds or an
  HTTP date, at most `max_retry_after`), else after the backoff.
- Any other 4xx (400, 401, 404, 422…) is the request's fault: it fails at
  once, not retryable, with the provider's own message (for the log; the
  person is told only that the render failed and nothing was charged).

Every wait goes through `pause`, so a render withdrawn meanwhile stops at once
(the remote driver's pause raises Withdrawn), and each retry is reported to
`on_state` (the job page shows "the image provider is not answering" rather
than "Drawing…").

What it sends and reads is bounded, whatever the provider (or something posing
as it) answers:

- Paths only, under the configured base URL: an absolute URL (or anything
  not starting with "/") is refused before anything is sent, so the auth
  header and the API key never go to another host.
- Redirects are not followed (a 3xx fails the request, not retryable): a
  redirect could take the auth header elsewhere, or loop.
- An answer's body is read up to `max_body_bytes` (RENDER_HTTP_MAX_BODY_BYTES,
  room for an inline picture of RENDER_IMAGE_MAX_BYTES as base64); past it,
  or past a `Content-Length` saying so, the request fails, not retryable. A
  `Content-Length` that is not a number is a failed request too.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import requests

from mangagen.kernel import failed_render

from .base import OnState, ProviderState, RenderError, StateChange

# Room for an inline picture of RENDER_IMAGE_MAX_BYTES (20 MB) as base64, and its JSON.
MAX_BODY_BYTES = 32 * 1024 * 1024
CHUNK = 64 * 1024

PROVIDER_DOWN = failed_render.PROVIDER_DOWN  # what the person is told (said once, there)


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any  # the JSON answer, or None when it was not JSON
    text: str
    headers: dict[str, str]


def declared_length(response: requests.Response) -> int | None:
    """The answer's `Content-Length` (None when it gives none). Raises RenderError when it
    is not a number: a malformed answer is a failed render, not a crash."""
    value = response.headers.get("Content-Length")
    if value is None or not value.strip():
        return None
    try:
        declared = int(value.strip())
    except ValueError:
        declared = -1
    if declared < 0:
        raise RenderError(
            f"The image provider answered with a Content-Length of {value[:40]!r}, "
            "not a number of bytes.",
            retryable=True,
        )
    return declared


def provider_message(response: requests.Response) -> str:
    """The provider's own words for a refusal, whichever of the usual shapes it uses:
    OpenAI's `{"error": {"message"}}`, RFC 7807's `{"title", "detail"}` (Replicate),
    FastAPI's `{"detail": [...]}` (AUTOMATIC1111), ComfyUI's `{"error": {...},
    "node_errors": {...}}`, or plain text."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:500]
    if not isinstance(body, dict):
        return str(body)[:500]
    error = body.get("error")
    parts = []
    if isinstance(error, dict):
        parts.append(str(error.get("message") or error.get("type") or error))
        if error.get("details"):
            parts.append(str(error["details"]))
    elif error:
        parts.append(str(error))
    for key in ("title", "detail", "errors", "node_errors"):
        if body.get(key) and str(body[key]) not in parts:
            parts.append(str(body[key]))
    return "; ".join(parts)[:1000] or response.text[:500]


def retry_after(value: str | None, *, limit: float) -> float | None:
    """Seconds a `Retry-After` header asks to wait (None if it says nothing usable)."""
    if not value:
        return None
    value = value.strip()
    if value.replace(".", "", 1).isdigit():
        return min(float(value), limit)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return min(max(0.0, when.timestamp() - time.time()), limit)


class ProviderHTTP:
    """One provider's HTTP API: `call` sends a request and applies the rules above."""

    def __init__(
        self,
        *,
        name: str,
        base_url: str,
        headers: dict[str, str] | None = None,
        auth: tuple[str, str] | None = None,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 1.0,
        max_retry_after: float = 60.0,
        max_body_bytes: int = MAX_BODY_BYTES,
        session: requests.Session | None = None,
    ):
        self.name = name
        self.base_url = base_url.rstrip("/")
        self.headers = headers or {}
        self.auth = auth
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_retry_after = max_retry_after
        self.max_body_bytes = max_body_bytes
        self.session = session or requests.Session()

    def url(self, path: str) -> str:
        """The URL of `path` under the base URL. Raises RenderError (not retryable) for
        anything but a path: an absolute URL would take the auth header to its host."""
        if not path.startswith("/") or path.startswith("//"):
            raise RenderError(
                f"{self.name}: {path[:200]!r} is not a path under {self.base_url}; "
                "requests go to the configured base URL only.",
                retryable=False,
            )
        return self.base_url + path

    def call(
        self,
        method: str,
        path: str,
        *,
        pause: Callable[[float], None] = time.sleep,
        on_state: OnState | None = None,
        refuse: Callable[[requests.Response], RenderError | None] | None = None,
        retries: int | None = None,
        **body: Any,
    ) -> Answer:
        """Sends the request until it is answered (2xx), refused (4xx: RenderError, not
        retryable), or the retries (`self.retries` unless told) are spent (RenderError,
        retryable). `refuse` sees every other answer but a 429 first: the RenderError it
        returns is raised at once (a provider's 5xx that is really a refusal); None
        leaves the answer to the rules above."""
        retries = self.retries if retries is None else retries
        url = self.url(path)
        last = "no attempt made"
        for attempt in range(retries + 1):
            wait: float | None = None
            try:
                response = self.session.request(
                    method,
                    url,
                    headers=self.headers,
                    auth=self.auth,
                    timeout=self.timeout,
                    allow_redirects=False,
                    stream=True,
                    **body,
                )
                self._read(response)
            except (requests.Timeout, requests.ConnectionError) as exc:
                last = f"{type(exc).__name__}: {exc}"[:300]
                state, detail = ProviderState.UNREACHABLE, "The image provider is not answering"
            else:
                if response.status_code < 300:
                    return self._answer(response)
                if response.status_code < 400:
                    raise RenderError(
                        f"{self.name} answered {path} with a redirect "
                        f"(HTTP {response.status_code}); redirects are not followed.",
                        retryable=False,
                    )
                refusal = refuse(response) if refuse and response.status_code != 429 else None
                if refusal is not None:
                    raise refusal
                if response.status_code == 429:
                    last = f"HTTP 429: {provider_message(response)}"
                    wait = retry_after(
                        response.headers.get("Retry-After"), limit=self.max_retry_after
                    )
                    state, detail = (
                        ProviderState.UNREACHABLE,
                        "The image provider asked us to slow down",
                    )
                elif response.status_code >= 500:
                    last = f"HTTP {response.status_code}: {provider_message(response)}"
                    state, detail = ProviderState.UNREACHABLE, "The image provider is failing"
                else:
                    raise self.refusal(response)
            if attempt == retries:
                break
            wait = self.backoff * 2**attempt if wait is None else wait
            if on_state is not None:
                on_state(
                    StateChange(state, f"{detail}; trying again in {wait:.0f} s.", retry_in=wait)
                )
            pause(wait)
        raise RenderError(
            f"{self.name} failed {retries + 1} times ({last}).",
            retryable=True,
            public=PROVIDER_DOWN,
        )

    def refusal(self, response: requests.Response) -> RenderError:
        """A 4xx: the request's fault, so trying it again cannot help."""
        return RenderError(
            f"{self.name} refused the request (HTTP {response.status_code}): "
            f"{provider_message(response)}",
            retryable=False,
        )

    def _read(self, response: requests.Response) -> None:
        """Reads the answer's body, at most `max_body_bytes` of it, into the response (so
        its .json() and .text read those bytes, never more). Raises RenderError past it."""
        try:
            declared = declared_length(response)
            if declared is not None and declared > self.max_body_bytes:
                raise self._too_big()
            content = bytearray()
            for chunk in response.iter_content(CHUNK):
                content += chunk
                if len(content) > self.max_body_bytes:
                    raise self._too_big()
        finally:
            response.close()
        # requests' own cache of a read body: .json() and .text read it from here.
        response._content = bytes(content)

    def _too_big(self) -> RenderError:
        return RenderError(
            f"{self.name} answered with a body over {self.max_body_bytes} bytes "
            "(RENDER_HTTP_MAX_BODY_BYTES).",
            retryable=False,
        )

    @staticmethod
    def _answer(response: requests.Response) -> Answer:
        try:
            body = response.json()
        except ValueError:
            body = None
        return Answer(
            status=response.status_code,
            body=body,
            text=response.text[:2000] if body is None else "",
            headers=dict(response.headers),
        )
