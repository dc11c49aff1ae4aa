"""A reading link's page images, answered without the application's request path.

A reader's browser asks for every page of a comic (and a link preview for the first, its
og:image), many readers at once: each answer here costs what a static file costs, or
less. `pages_asgi.py` answers them ahead of Django (no middleware, no DRF, no thread),
and the Django view `views.page` through the same `answer` where that is not in front.

- The link is read from the database once and kept in this process's memory
  (`link_cache.links`) for at most a quarter of READ_REVOKE_SECONDS; a change to it
  (published again, Stop sharing, the comic deleted) makes every process forget it
  within about a second (`changes.py`), the one that made it at once. A page address
  carries the version the reader page was built from (`v`): a newer one than the kept
  link is read again at once.
- The page's bytes come from memory (`link_cache.files`, READ_CACHE_MB) or from the
  media storage; a 304 needs neither. With READ_FROM_STORAGE (and an S3 bucket) the
  answer is a redirect to a signed URL of the bucket that lives a quarter of
  READ_REVOKE_SECONDS.
- Images are counted per address in this process (`page_throttle.py`), never in Redis.
- `Cache-Control: public, max-age=Q, s-maxage=Q, must-revalidate` with Q a quarter of
  READ_REVOKE_SECONDS: after Stop sharing, this process serves the page at most Q more
  seconds; a cache between keeps it at most Q after that, a browser behind it Q more;
  a signed URL lives Q. So nothing of an ended link is served past READ_REVOKE_SECONDS.
  Not-found answers are never kept (`no-store`).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.files.storage import FileSystemStorage, default_storage
from django.db import close_old_connections, connection
from rest_framework.exceptions import Throttled

from mangagen.kernel import storage
from mangagen.observability.metrics import READING_ANSWERS, reading_pages

from . import changes, link_cache, page_throttle, selectors
from .models import ReadingLink
from .services import token_digest


@dataclass(frozen=True)
class PageRequest:
    token: str
    number: int
    language: str | None
    version: int | None  # the `v` of the page's address (the reader page's version)
    if_none_match: str
    address: str  # the caller's, as the throttles count it (client_address)


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


def quarter() -> int:
    """Seconds each layer may keep a page of a link that ended (READ_REVOKE_SECONDS / 4)."""
    return settings.READ_REVOKE_SECONDS // 4


def cache_control() -> str:
    """What a page image (and a reading link's download) may be kept for, by browsers
    and caches between: never past READ_REVOKE_SECONDS after its link ended."""
    kept = quarter()
    return f"public, max-age={kept}, s-maxage={kept}, must-revalidate"


NOT_KEPT = "no-store"  # a refusal, a page gone: never kept anywhere


# Each answer's count (mangagen_reading_pages_total), by status.
_COUNTED = {
    status: reading_pages.labels(answer=name)
    for status, name in zip((200, 304, 302, 404, 429), READING_ANSWERS, strict=True)
}


async def answer(request: PageRequest) -> Answer:
    """The answer to a page image's request: the page (200), 304 for the ETag it has, a
    redirect to its signed storage URL (READ_FROM_STORAGE), 404 for a link that is not
    (or no longer) shared or a page past its last, 429 past THROTTLE_READ."""
    answered = await _answer(request)
    _COUNTED[answered.status].inc()
    return answered


async def _answer(request: PageRequest) -> Answer:
    wait = page_throttle.take(request.address)
    if wait is not None:
        return _throttled(wait)
    if changes.reader.due(time.monotonic()):
        await sync_to_async(changes.poll_if_due, thread_sensitive=False)()
    for _ in range(2):
        link = await _link(request.token, version=request.version)
        found = link and selectors.page_file(link, number=request.number, language=request.language)
        if not found:
            return not_found()
        headers = {
            "ETag": found.etag,
            "Cache-Control": cache_control(),
            "X-Content-Type-Options": "nosniff",
        }
        asked = etags(request.if_none_match)
        if found.etag in asked or "*" in asked:
            return Answer(304, headers)
        if redirects_to_storage():
            url = await _signed_url(found.name)
            return Answer(302, {"Location": url, "Cache-Control": NOT_KEPT})
        data = await _page_bytes(found.name)
        if data is not None:
            return Answer(200, {**headers, "Content-Type": "image/png"}, data)
        # Its file is gone: the link moved on (or ended) since it was read. Read it again.
        link_cache.links.forget([token_digest(request.token)])
    return not_found()


def not_found() -> Answer:
    return _json(404, "not_found", "No such page.")


def _throttled(wait: float) -> Answer:
    refused = _json(429, "throttled", str(Throttled(wait=wait).detail))
    refused.headers["Retry-After"] = str(max(1, int(wait + 0.999)))
    return refused


def _json(status: int, code: str, detail: str) -> Answer:
    body = json.dumps({"error": code, "detail": detail}).encode()
    return Answer(status, {"Content-Type": "application/json", "Cache-Control": NOT_KEPT}, body)


def etags(header: str) -> set[str]:
    """The entity tags of an If-None-Match header (weak comparison, as it asks)."""
    return {part.strip().removeprefix("W/") for part in header.split(",") if part.strip()}


def redirects_to_storage() -> bool:
    return settings.READ_FROM_STORAGE and not isinstance(default_storage, FileSystemStorage)


async def _link(token: str, *, version: int | None) -> ReadingLink | None:
    """The link `token` opens, from memory while it is fresh (and not older than
    `version`), else from the database."""
    if len(token) not in selectors.TOKEN_LENGTHS:
        return None
    digest = token_digest(token)
    now = time.monotonic()
    kept, link = link_cache.links.get(digest, now=now, hold=quarter())
    if kept and (link is None or version is None or link.version >= version):
        return link
    epoch = link_cache.links.epoch
    link = await sync_to_async(_read_link, thread_sensitive=True)(token)
    link_cache.links.put(digest, link, read_at=now, epoch=epoch)
    return link


def _read_link(token: str) -> ReadingLink | None:
    link = selectors.link_for_token(token)
    if not connection.in_atomic_block:
        # Outside a request, nothing else gives the connection back (to the pool).
        close_old_connections()
    return link


async def _page_bytes(name: str) -> bytes | None:
    limit = settings.READ_CACHE_MB * 2**20
    data = link_cache.files.get(name) if limit else None
    if data is None:
        data = await sync_to_async(storage.read, thread_sensitive=False)(name)
        if data is not None and limit:
            link_cache.files.put(name, data, limit=limit)
    return data


# Signed URLs by file name, each with when it was signed: handed out again while at least
# half of its life is left, so a browser that keeps the page finds it under one address.
_signed: dict[str, tuple[float, str]] = {}
_signing = threading.Lock()  # a crowd's first asks sign once, not once each
SIGNED_KEPT = 4096


async def _signed_url(name: str) -> str:
    made = _signed.get(name)
    if made is not None and time.monotonic() - made[0] < quarter() / 2:
        return made[1]
    return await sync_to_async(_sign, thread_sensitive=False)(name)


def _sign(name: str) -> str:
    """A URL of the bucket for `name` that lives a quarter of READ_REVOKE_SECONDS and
    tells whoever keeps the bytes to keep them no longer than a page served here."""
    with _signing:
        now = time.monotonic()
        made = _signed.get(name)
        if made is not None and now - made[0] < quarter() / 2:
            return made[1]
        parameters = {"ResponseCacheControl": cache_control(), "ResponseContentType": "image/png"}
        url = default_storage.url(name, parameters=parameters, expire=quarter())
        if len(_signed) >= SIGNED_KEPT:
            _signed.clear()
        _signed[name] = (now, url)
        return url


def forget_everything() -> None:
    """Empties this process's memory of links, files, signed URLs and counts (tests)."""
    link_cache.links.forget_all()
    link_cache.files.clear()
    _signed.clear()
    page_throttle.counts.clear()
    changes.reader.reset()
