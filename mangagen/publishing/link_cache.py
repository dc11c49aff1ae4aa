"""The reading links this process has read, kept in memory a short while (the lean path of
their page images, `serving.py`), and the page files it has read.

A link is kept at most `hold` seconds (a quarter of READ_REVOKE_SECONDS) from when it
was read from the database, so a link that ended is served from memory no longer than
that, whatever else fails; `changes.py` makes every process forget it much sooner.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .models import ReadingLink

# Links kept at most (the oldest read leave first); each is read again every `hold`.
LINKS_KEPT = 4096


class LinkCache:
    """Links by their token's digest, each with the time it was read; None for a token
    that opened no link (a crowd asking for an ended link asks the database once).

    A read that began before a change was announced is not kept (`epoch`): a link read
    just before its Stop sharing committed never outlives the news of it."""

    def __init__(self, size: int = LINKS_KEPT):
        self._entries: OrderedDict[str, tuple[float, ReadingLink | None]] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()
        self.epoch = 0

    def get(self, digest: str, *, now: float, hold: float) -> tuple[bool, ReadingLink | None]:
        """(whether a reading younger than `hold` is kept, the link it found)."""
        entry = self._entries.get(digest)
        if entry is None or now - entry[0] >= hold:
            return False, None
        return True, entry[1]

    def put(self, digest: str, link: ReadingLink | None, *, read_at: float, epoch: int) -> None:
        """Keeps what a read begun at `read_at` found, unless a change was announced since
        it began (`epoch`, taken before it)."""
        with self._lock:
            if epoch != self.epoch:
                return
            self._entries[digest] = (read_at, link)
            self._entries.move_to_end(digest)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def forget(self, digests: list[str]) -> None:
        with self._lock:
            self.epoch += 1
            for digest in digests:
                self._entries.pop(digest, None)

    def forget_all(self) -> None:
        with self._lock:
            self.epoch += 1
            self._entries.clear()


class FileCache:
    """Page files by their storage name (a name is never written twice with other bytes:
    each published version has a folder of its own), the newest read kept up to a number
    of bytes. Only ever reached through a link found alive: an ended link's files are
    unreachable here, and leave as others come."""

    def __init__(self):
        self._files: OrderedDict[str, bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, name: str) -> bytes | None:
        with self._lock:
            data = self._files.get(name)
            if data is not None:
                self._files.move_to_end(name)
            return data

    def put(self, name: str, data: bytes, *, limit: int) -> None:
        if len(data) > limit // 4:  # one file never takes most of it
            return
        with self._lock:
            if name in self._files:
                return
            self._files[name] = data
            self._bytes += len(data)
            while self._bytes > limit:
                _, gone = self._files.popitem(last=False)
                self._bytes -= len(gone)

    def clear(self) -> None:
        with self._lock:
            self._files.clear()
            self._bytes = 0


links = LinkCache()
files = FileCache()
