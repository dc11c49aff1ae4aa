"""Request bodies refused on their size before they are kept, by the route they are for.

The bound of a path is its view's `request_body` (mangagen/kernel/request_bodies.py:
an upload route takes REQUEST_UPLOAD_MAX_BYTES, every other one
REQUEST_BODY_MAX_BYTES), read from the URL resolver, so a path no route has takes the
smaller. Two places refuse with it, each before it stores a byte of a body past it:

- daphne (mangagen/web/daphne_server.py), as the request's headers arrive: Twisted
  would otherwise write a body of any size to a temporary file before daphne sees
  the request (a 300 MiB body, then Django's own copy of it, then the upload's);
- the ASGI handler (mangagen/web/asgi_handler.py), before Django reads the body into
  its own temporary file, for any other ASGI server.

The answer is the API's error shape: 413 `too_large` with `limit_bytes`, in the
language the request asks for, signed in or not (nothing of the session is read).
"""

from __future__ import annotations

from functools import lru_cache

from django.http import HttpRequest, JsonResponse
from django.http.cookie import parse_cookie
from django.urls import Resolver404, resolve
from django.utils import translation

from mangagen.api.errors import plain_error_response
from mangagen.kernel.request_bodies import BodyKind, BodyTooLarge, largest_body


@lru_cache(maxsize=4096)
def _kind_of(path: str) -> BodyKind:
    try:
        match = resolve(path)
    except Resolver404:
        return BodyKind.JSON
    view = getattr(match.func, "view_class", None) or getattr(match.func, "cls", None)
    return BodyKind(getattr(view, "request_body", BodyKind.JSON))


def limit_for(path: str) -> int:
    """The most bytes a body sent to `path` may have."""
    return largest_body(_kind_of(path) if len(path) <= 2048 else BodyKind.JSON)


def declared_length(value: str | bytes | None) -> int | None:
    """A `Content-Length` value as a number, None when absent or not one (the server
    answers a malformed one itself)."""
    if value is None:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 20 else None


def refusal(*, limit: int, accept_language: str = "", cookie: str = "") -> JsonResponse:
    """The 413 for a body past `limit`, in the language the request's cookie or its
    Accept-Language asks for."""
    asked = HttpRequest()
    asked.META["HTTP_ACCEPT_LANGUAGE"] = accept_language
    asked.COOKIES = parse_cookie(cookie)
    with translation.override(translation.get_language_from_request(asked)):
        response = plain_error_response(BodyTooLarge(limit=limit))
    response["Connection"] = "close"
    return response
