"""A reading link's page images counted per address in this process (THROTTLE_READ).

The public reader's page is counted in Redis, shared by every process (views.py); its
images, which a reader asks for by the dozen, are counted here, in memory, so that an
image costs no round trip: each web process allows an address THROTTLE_READ's rate of
images. Counted in fixed windows of the rate's period; one window's counts are dropped
when the next begins, so memory holds at most one window's addresses.
"""

from __future__ import annotations

import functools
import threading
import time

from rest_framework.throttling import ScopedRateThrottle

SCOPE = "read"
# An address as the throttle counts it is short (an IPv4 address, an IPv6 /64); anything
# longer is cut, so no key grows with what a header says.
ADDRESS_CHARACTERS = 64


class AddressCounts:
    """Requests per address in the current window of a rate's period."""

    def __init__(self):
        self._lock = threading.Lock()
        self._window: tuple[int, int] | None = None
        self._counts: dict[str, int] = {}

    def take(self, address: str, *, limit: int, period: int, now: float) -> float | None:
        """Counts one request of `address`: None when allowed, else the seconds until its
        window ends (past `limit` in this one)."""
        window = (period, int(now // period))
        key = address[:ADDRESS_CHARACTERS]
        with self._lock:
            if window != self._window:
                self._window, self._counts = window, {}
            count = self._counts.get(key, 0) + 1
            self._counts[key] = count
        if count <= limit:
            return None
        return (window[1] + 1) * period - now

    def clear(self) -> None:
        with self._lock:
            self._window, self._counts = None, {}


counts = AddressCounts()


def clock() -> float:
    return time.time()


def take(address: str) -> float | None:
    """Counts an image asked by `address` against THROTTLE_READ (as DRF's throttles read
    it); None when allowed, else the seconds to wait."""
    rate = ScopedRateThrottle.THROTTLE_RATES.get(SCOPE)
    if not rate:
        return None
    limit, period = _parsed(rate)
    return counts.take(address, limit=limit, period=period, now=clock())


@functools.lru_cache(maxsize=16)
def _parsed(rate: str) -> tuple[int, int]:
    return ScopedRateThrottle().parse_rate(rate)
