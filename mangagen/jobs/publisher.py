"""Sends job events to the channel layer from one long-lived event loop per process.

`async_to_sync(layer.group_send)` from a request or a worker thread starts an
event loop for the call, and channels_redis opens a connection pool per loop:
each event cost a new loop and a new Redis connection, several milliseconds,
paid inside the request that clicked Generate (an attached Generate sends
six). Here a daemon thread keeps one loop and one pool for the process;
`publish` hands it the message and returns at once. One coroutine sends the
messages in the order they were handed over, so a job's events reach its
group in `seq` order.

Losing a message stays allowed (the log is the truth; clients catch up from
it): a message handed over just before the process exits may not be sent.
A layer that lives in the caller's process and loop (the in-memory layer of
tests) is not served from here: its clients are on the caller's loop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from typing import Any

logger = logging.getLogger(__name__)


class Publisher:
    def __init__(self, layer: Any):
        self.layer = layer
        self.pid = os.getpid()
        self._loop = asyncio.new_event_loop()
        self._queue: asyncio.Queue[tuple[str, dict] | None] | None = None
        ready = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(ready,), name="job-event-publisher", daemon=True
        )
        self._thread.start()
        ready.wait()

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        self._queue = asyncio.Queue()
        ready.set()
        try:
            self._loop.run_until_complete(self._send_until_stopped())
        finally:
            self._loop.close()

    async def _send_until_stopped(self) -> None:
        assert self._queue is not None
        while True:
            item = await self._queue.get()
            if item is None:  # stop()
                return
            group, message = item
            try:
                await self.layer.group_send(group, message)
            except Exception:  # the log has it; clients catch up from there
                logger.warning("Could not publish to %s", group, exc_info=True)

    def stop(self, timeout: float = 5.0) -> None:
        """Sends what was handed over, then ends the thread."""
        self._loop.call_soon_threadsafe(self._queue.put_nowait, None)  # type: ignore[union-attr]
        self._thread.join(timeout)

    def send(self, group: str, message: dict) -> None:
        assert self._queue is not None
        self._loop.call_soon_threadsafe(self._queue.put_nowait, (group, message))


_publisher: Publisher | None = None
_mutex = threading.Lock()


def publisher_for(layer: Any) -> Publisher:
    """The process's publisher for `layer` (a new one after a fork: threads do not
    survive it)."""
    global _publisher
    with _mutex:
        if _publisher is None or _publisher.pid != os.getpid() or _publisher.layer is not layer:
            if _publisher is not None and _publisher.pid == os.getpid():
                _publisher.stop(timeout=0)  # the layer was replaced (settings changed)
            _publisher = Publisher(layer)
        return _publisher


def serves(layer: Any) -> bool:
    """Whether `layer` reaches other processes (and so may be sent to from our own loop)."""
    return type(layer).__module__.startswith("channels_redis")
