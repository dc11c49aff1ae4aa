"""The day's roughs of one person: ROUGHS_PER_PERSON_PER_DAY (UTC), counted in the cache.

Counted when they are asked for, in Redis (an atomic increment), so two tabs asking at
once cannot both pass the bound, and deleting a comic gives nothing back.
"""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone


def _key(user_id: int, now: datetime) -> str:
    return f"roughs:{user_id}:{now.date().isoformat()}"


def seconds_to_tomorrow(now: datetime) -> int:
    tomorrow = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(int((tomorrow - now).total_seconds()), 1)


def used(*, user_id: int, now: datetime | None = None) -> int:
    """How many roughs the person asked for today."""
    return int(cache.get(_key(user_id, now or timezone.now())) or 0)


def take(*, user_id: int, wanted: int, now: datetime | None = None) -> int:
    """Takes up to `wanted` of the person's roughs of today; returns how many it took
    (0 when the day's are spent)."""
    if wanted <= 0:
        return 0
    now = now or timezone.now()
    key = _key(user_id, now)
    timeout = seconds_to_tomorrow(now) + 3600  # the key outlives its day
    # add() starts the day's count, incr() is atomic in Redis.
    count = wanted if cache.add(key, wanted, timeout=timeout) else cache.incr(key, wanted)
    over = max(0, count - settings.ROUGHS_PER_PERSON_PER_DAY)
    granted = max(0, wanted - over)
    if wanted - granted:
        with contextlib.suppress(ValueError):  # the key expired meanwhile
            cache.decr(key, wanted - granted)
    return granted


def limit() -> int:
    return settings.ROUGHS_PER_PERSON_PER_DAY
