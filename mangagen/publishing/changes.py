"""Telling every web process that a reading link changed (published again, stopped, ended
with its comic), so that none goes on serving it from memory (`link_cache.py`).

The process that makes the change forgets the link at once, and again when it commits;
the commit adds the link's token digest to a Redis stream that every process reads at
most once a second, on a reader's request (`poll_if_due`), forgetting what it names.
The stream only makes the news fast: if Redis is away, or a process misses it, the link
still leaves that process's memory `hold` seconds after it was read (link_cache.py),
which is what READ_REVOKE_SECONDS is built on.
"""

from __future__ import annotations

import logging
import threading
import time

import redis
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.db import transaction

from . import link_cache

logger = logging.getLogger(__name__)

STREAM = "reading-links:changes"
# Changes the stream keeps (about); a process that finds this many new ones at once may
# have missed older ones, and forgets every link instead.
STREAM_LENGTH = 10_000
POLL_SECONDS = 1.0


def changed(digest: str) -> None:
    """Inside the transaction that changes or ends the link of token digest `digest`:
    this process forgets it now and again at commit; the others once committed."""
    link_cache.links.forget([digest])
    transaction.on_commit(lambda: _announce(digest), robust=True)


def _announce(digest: str) -> None:
    link_cache.links.forget([digest])
    found = _stream()
    if found is not None:
        client, key = found
        client.xadd(key, {"digest": digest}, maxlen=STREAM_LENGTH, approximate=True)


class _Reader:
    """Where this process is in the stream, and when it last looked."""

    def __init__(self):
        self.lock = threading.Lock()
        self.last_id: bytes | str | None = None
        self.polled_at = float("-inf")

    def due(self, now: float) -> bool:
        return now - self.polled_at >= POLL_SECONDS

    def reset(self) -> None:
        self.last_id, self.polled_at = None, float("-inf")


reader = _Reader()


def poll_if_due() -> None:
    """Reads the changes announced since this process last looked, if it has not looked
    for POLL_SECONDS (one caller at a time; the others go on), and forgets those links.
    The first look forgets every link (what was read before it may have changed since)."""
    if not reader.lock.acquire(blocking=False):
        return
    try:
        if not reader.due(time.monotonic()):
            return
        reader.polled_at = time.monotonic()
        found = _stream()
        if found is None:
            return
        client, key = found
        try:
            _read(client, key)
        except redis.RedisError as error:
            logger.warning("Reading links' changes could not be read: %s", error)
    finally:
        reader.lock.release()


def _read(client, key: str) -> None:
    if reader.last_id is None:
        newest = client.xrevrange(key, count=1)
        reader.last_id = newest[0][0] if newest else "0-0"
        link_cache.links.forget_all()
        return
    answered = client.xread({key: reader.last_id}, count=STREAM_LENGTH)
    entries = answered[0][1] if answered else []
    if not entries:
        return
    reader.last_id = entries[-1][0]
    if len(entries) >= STREAM_LENGTH:
        link_cache.links.forget_all()
        return
    link_cache.links.forget(
        [_text(fields.get(b"digest", fields.get("digest", ""))) for _, fields in entries]
    )


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _stream():
    """The Redis client of the cache and the stream's key in it (the cache's prefix);
    None where the cache is not Redis (one process: forgetting locally is all there is)."""
    backend = caches["default"]
    if not isinstance(backend, RedisCache):
        return None
    key = backend.make_and_validate_key(STREAM)
    # Django's client for that key (its connection pool), as mangagen.api.throttles does.
    return backend._cache.get_client(key, write=True), key
