"""How large a request body may be, by the kind of route it is sent to, and the refusal.

Bodies are refused on their size before they are stored anywhere, by the web server
and the ASGI handler (mangagen/web/body_limits.py), signed in or not: on
`Content-Length` before any byte of the body is kept, and, for a body sent without
one (chunked), as soon as what arrived passes the bound. The JSON API and the forms
take small bodies (REQUEST_BODY_MAX_BYTES); the routes that take a picture (a sheet,
a place's picture, a touch-up's mask) declare `request_body = BodyKind.UPLOAD` on
their view and take up to REQUEST_UPLOAD_MAX_BYTES. The proxy in front should bound
bodies the same way (nginx's `client_max_body_size`: docs/operating.md).
"""

from __future__ import annotations

from enum import StrEnum

from django.conf import settings
from django.utils.translation import gettext

from .errors import ApplicationError, Code


class BodyKind(StrEnum):
    """What a route's body is, for its bound."""

    JSON = "json"  # the JSON API, forms (sign-in, the admin), beacons
    UPLOAD = "upload"  # a picture in a multipart body


def largest_body(kind: BodyKind) -> int:
    """The most bytes a body of `kind` may have."""
    if kind == BodyKind.UPLOAD:
        return settings.REQUEST_UPLOAD_MAX_BYTES
    return settings.REQUEST_BODY_MAX_BYTES


class BodyTooLarge(ApplicationError, code=Code.TOO_LARGE, status=413):
    """A body past its route's bound: 413 `too_large`, with `limit_bytes`."""

    def __init__(self, *, limit: int):
        super().__init__(
            gettext("The body is larger than %(n)s bytes, the most this address takes.")
            % {"n": limit}
        )
        self.limit = limit

    def extra(self) -> dict:
        return {"limit_bytes": self.limit}
