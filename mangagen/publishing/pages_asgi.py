"""Reading links' page images answered ahead of Django (`mangagen/asgi.py`).

`GET`/`HEAD /read/<token>/pages/<n>/` goes to `serving.answer` straight from the ASGI
server's event loop: no middleware, no DRF, no thread for a page already in memory.
Anything else, or a request Django would turn away first (a Host that ALLOWED_HOSTS
does not allow, plain HTTP while SECURE_SSL_REDIRECT is on), goes to Django as before.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

from django.conf import settings
from django.http import HttpRequest
from django.http.request import split_domain_port, validate_host

from mangagen.kernel.client_address import client_address

from . import serving

PAGE = re.compile(r"/read/([A-Za-z0-9_-]{1,128})/pages/([0-9]{1,9})/")


def with_reading_pages(django_app):
    """`django_app` with reading links' page images answered before it."""

    async def application(scope, receive, send):
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            match = PAGE.fullmatch(scope["path"])
            if match is not None:
                meta = _meta(scope)
                if _servable(scope, meta):
                    await _serve(scope, meta, send, token=match[1], number=int(match[2]))
                    return
        await django_app(scope, receive, send)

    return application


async def _serve(scope, meta: dict, send, *, token: str, number: int) -> None:
    query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
    version = query.get("v", "")
    request = HttpRequest()
    request.META = meta
    answer = await serving.answer(
        serving.PageRequest(
            token=token,
            number=number,
            language=query.get("lang"),
            version=int(version) if version.isdigit() and len(version) < 10 else None,
            if_none_match=meta.get("HTTP_IF_NONE_MATCH", ""),
            address=client_address(request),
        )
    )
    headers = [(b"content-length", str(len(answer.body)).encode())]
    headers += [
        (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in answer.headers.items()
    ]
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    body = b"" if scope["method"] == "HEAD" else answer.body
    await send({"type": "http.response.body", "body": body})


def _meta(scope) -> dict[str, str]:
    """The request's headers as Django's request.META holds them (what client_address
    reads), with the caller's address."""
    client = scope.get("client")
    meta = {"REMOTE_ADDR": client[0] if client else "", "REQUEST_METHOD": scope["method"]}
    for raw_name, raw_value in scope.get("headers", []):
        name = "HTTP_" + raw_name.decode("latin-1").upper().replace("-", "_")
        value = raw_value.decode("latin-1")
        meta[name] = f"{meta[name]},{value}" if name in meta else value
    return meta


def _servable(scope, meta: dict[str, str]) -> bool:
    """False for a request Django answers otherwise before any view: a Host it does not
    allow (400), plain HTTP to be redirected to HTTPS."""
    if settings.USE_X_FORWARDED_HOST and "HTTP_X_FORWARDED_HOST" in meta:
        return False  # Django's own reading of it decides
    domain, _ = split_domain_port(meta.get("HTTP_HOST", ""))
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]  # as Django's get_host()
    if not domain or not validate_host(domain, allowed):
        return False
    return not settings.SECURE_SSL_REDIRECT or _secure(scope, meta)


def _secure(scope, meta: dict[str, str]) -> bool:
    if scope.get("scheme") == "https":
        return True
    header = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if not header:
        return False
    name, secure = header
    return meta.get(name, "").split(",", 1)[0].strip() == secure
