"""A render's liveness while it runs: a heartbeat from the worker, kept in Redis.

A render task beats every RENDER_HEARTBEAT_SECONDS from a thread of its own
(whatever the renderer is doing: waiting for a container, booting, or a long
HTTP request), under a key that lives three beats. A worker that dies (its
process SIGKILLed, its machine gone) stops beating; the sweep sends the
render again once the key is gone, under the same attempt and hold, so the
person is charged once and waits seconds, not RENDER_STUCK_SECONDS.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from functools import cache

import redis
from django.conf import settings


def ticket(job_id: int, index: int, attempt: int) -> str:
    """One render attempt's name, in the GPU pool's queues and for its heartbeat."""
    return f"job:{job_id}:panel:{index}:attempt:{attempt}"


@cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


def _key(name: str) -> str:
    return f"{settings.GPU_POOL_PREFIX}:alive:{name}"


def alive(name: str) -> bool:
    """Whether a worker is rendering (or waiting to render) this attempt right now."""
    try:
        return bool(_client(settings.REDIS_URL).exists(_key(name)))
    except redis.RedisError:
        return False


def alive_many(names: list[str]) -> dict[str, bool]:
    if not names:
        return {}
    try:
        pipe = _client(settings.REDIS_URL).pipeline()
        for name in names:
            pipe.exists(_key(name))
        return {name: bool(found) for name, found in zip(names, pipe.execute(), strict=True)}
    except redis.RedisError:
        return dict.fromkeys(names, True)  # no verdict without Redis: the slow path decides


class Heartbeat:
    """Beats for one render from a daemon thread until stopped (use as a context manager)."""

    def __init__(self, name: str):
        self.name = name
        self.every = settings.RENDER_HEARTBEAT_SECONDS
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"beat {name}")

    def beat(self) -> None:
        # A missed beat costs at most a duplicate render, charged once. The value names
        # the worker process, for an operator asking who renders what.
        with contextlib.suppress(redis.RedisError):
            _client(settings.REDIS_URL).set(
                _key(self.name),
                f"{socket.gethostname()}:{os.getpid()}",
                ex=max(1, int(self.every * 3)),
            )

    def _run(self) -> None:
        while not self._done.wait(self.every):
            self.beat()

    def __enter__(self) -> Heartbeat:
        self.beat()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join(timeout=5)
        with contextlib.suppress(redis.RedisError):
            _client(settings.REDIS_URL).delete(_key(self.name))
