"""Per-person caps, so one account cannot grow the database, the job queue or the
operator's chat bill without bound. A refused request changes nothing.

Drafting with a chat model (`DRAFTER=openai`, and translations with
`TRANSLATOR=openai`) costs the operator per call, so it has a daily quota
per person rather than a credit price: credits pay for
renders a person sees, and charging for a draft they may throw away would
make the first step of every comic cost money. The free rule-based drafter
(`DRAFTER=rules`) has no quota.

The caps themselves are checked where their rows live (a comic's count in
storyboards/services.py, a series' in series/services.py, the library's in
library/services.py, live jobs in jobs/decisions.py, stored pictures in
characters/picture_budget.py), each raising this module's LimitReached; this
module knows no model. The caps on comics and live jobs are counted, not locked: two requests at the
same instant may both pass, so a person can end one over. They bound growth;
they are not money, which the ledger guards exactly.
"""

from __future__ import annotations

import contextlib
import math
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone
from django.utils.translation import gettext, ngettext

from mangagen.kernel.errors import ApplicationError
from mangagen.observability import metrics


class Limit(StrEnum):
    """The `error` code of each refusal (the API answers 429)."""

    STORYBOARDS = "too_many_storyboards"
    SERIES = "too_many_series"
    LIBRARY = "library_full"
    LIVE_JOBS = "too_many_live_jobs"
    DRAFTS = "draft_quota"
    DRAWING = "drawing_budget"


class LimitReached(ApplicationError, status=429, codes=Limit):
    """A refusal; each is made to be raised, so it is counted as it is made
    (mangagen_limit_refusals_total)."""

    def __init__(self, limit: Limit, detail: str, *, retry_after: int | None = None):
        super().__init__(detail)
        metrics.limit_refusals.labels(limit=limit).inc()
        self.code = limit
        self.retry_after = retry_after

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)} if self.retry_after else {}


for _limit in Limit:  # every code on the dashboard from the start, at zero
    metrics.limit_refusals.labels(limit=_limit)


def take_draft(*, user, now: datetime | None = None) -> None:
    """Counts one chat-model draft for `user` today (UTC); raises LimitReached past the quota."""
    if settings.DRAFTER == "rules":
        return
    take_chat_call(user=user, now=now)


def take_chat_call(*, user, now: datetime | None = None) -> None:
    """Counts one call of the chat model for `user` today (UTC), a storyboard draft or
    a translation draft alike; raises LimitReached past DRAFT_DAILY_QUOTA."""
    now = now or timezone.now()
    tomorrow = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    seconds_left = max(int((tomorrow - now).total_seconds()), 1)
    key = f"drafts:{user.pk}:{now.date().isoformat()}"
    # add() starts the day's count, incr() is atomic in Redis; the key outlives the day.
    used = 1 if cache.add(key, 1, timeout=seconds_left + 3600) else cache.incr(key)
    if used > settings.DRAFT_DAILY_QUOTA:
        raise LimitReached(
            Limit.DRAFTS,
            gettext(
                "You have used today's %(quota)s drafts by the language model; "
                "write by hand, or draft again tomorrow."
            )
            % {"quota": settings.DRAFT_DAILY_QUOTA},
            retry_after=seconds_left,
        )


# --- the drawing budget --------------------------------------------------------------
#
# What a person's requests spent drawing in the last WINDOW_SECONDS, kept in the cache
# (Redis) in slots of SLOT_SECONDS: `drawing:<person>:<slot>`, each a count of CPU
# milliseconds. Every request of the person, in any web process, reads and adds to the
# same slots, so two at once see each other's spend; the window rolls, so a request
# that starts near the end of a minute gets no fresh minute.
#
# A build reserves what it is reckoned to cost before it starts (its `estimate`,
# added to the window, then read: two at once each see the other's), and settles
# with the CPU time it really took when it ends; so builds started together cannot
# all pass a window that none of them has written to yet. And a person has at most
# DRAWING_BUILDS_IN_FLIGHT builds drawing at once, each holding a lease
# (`drawing-build:<person>:<n>`, BUILD_LEASE_SECONDS, renewed while it draws) that a
# build which crashed lets go of by expiring.

WINDOW_SECONDS = 60
SLOT_SECONDS = 5
_SLOTS = WINDOW_SECONDS // SLOT_SECONDS
BUILD_LEASE_SECONDS = 120

_drawing = threading.local()


def clock() -> float:
    """Seconds since the epoch: the drawing budget's window (tests fix it)."""
    return time.time()


@dataclass
class _Block:
    """A `drawing` block open on this thread: whose, and what is left of what it reserved."""

    user_id: int
    prepaid_ms: float = 0.0
    reserved_at: float = 0.0  # the clock when it reserved: what it gives back goes there
    lease: tuple[str, str] | None = None  # the build's slot (key, token), outermost only
    leased_at: float = 0.0


def _blocks() -> list[_Block]:
    if not hasattr(_drawing, "blocks"):
        _drawing.blocks = []
    return _drawing.blocks


def _budget_ms() -> int:
    return math.floor(settings.DRAWING_CPU_SECONDS_PER_MINUTE * 1000)


def _slot_key(user_id: int, slot: int) -> str:
    return f"drawing:{user_id}:{slot}"


def spent_by_slot(user_id: int, now: float) -> list[int]:
    """The milliseconds spent in each slot of the window, oldest first (the current last)."""
    current = int(now // SLOT_SECONDS)
    slots = range(current - _SLOTS + 1, current + 1)
    found = cache.get_many([_slot_key(user_id, slot) for slot in slots])
    return [int(found.get(_slot_key(user_id, slot)) or 0) for slot in slots]


def _add(user_id: int, ms: int, now: float) -> None:
    """Adds `ms` (negative: gives back) to the person's slot of the moment `now`."""
    if not ms:
        return
    key = _slot_key(user_id, int(now // SLOT_SECONDS))
    # add() starts the slot's count, incr() is atomic in Redis; a slot outlives the window.
    if not cache.add(key, ms, timeout=WINDOW_SECONDS + 2 * SLOT_SECONDS):
        with contextlib.suppress(ValueError):  # the slot's key expired meanwhile
            cache.incr(key, ms)


def _retry_after(window: list[int], now: float, *, room_ms: int) -> int:
    """Seconds until what the window holds leaves `room_ms` of the budget."""
    left = sum(window)
    first = int(now // SLOT_SECONDS) - _SLOTS + 1
    for n, spent in enumerate(window):
        left -= spent
        if left + room_ms <= _budget_ms():
            return max(math.ceil((first + n) * SLOT_SECONDS + WINDOW_SECONDS - now), 1)
    return WINDOW_SECONDS


def _spent_refusal(retry_after: int) -> LimitReached:
    return LimitReached(
        Limit.DRAWING,
        gettext(
            "You have asked for a lot of drawing this minute (pages, exports, lettering); "
            "what is drawn already is still there. Try again in a moment."
        ),
        retry_after=retry_after,
    )


def _settle(*, at_least_ms: float = 0.0) -> None:
    """Puts the CPU time this thread spent since the last settlement on the books of the
    innermost open block's person: from what its blocks reserved first, the rest in the
    window. Called whenever a block opens or closes, so an outer block's time is counted
    before each nested build is checked; renews the build's lease while it draws."""
    blocks = _blocks()
    if not blocks:
        return
    now_cpu = time.thread_time()
    used_ms = max((now_cpu - _drawing.mark) * 1000, at_least_ms)
    _drawing.mark = now_cpu
    metrics.drawing_cpu_seconds.inc(used_ms / 1000)
    user_id = blocks[-1].user_id
    for block in reversed(blocks):
        if block.user_id == user_id and block.prepaid_ms > 0:
            taken = min(block.prepaid_ms, used_ms)
            block.prepaid_ms -= taken
            used_ms -= taken
    if used_ms > 0:
        _add(user_id, math.ceil(used_ms), clock())
    for block in blocks:
        if block.lease and time.monotonic() - block.leased_at > BUILD_LEASE_SECONDS / 3:
            cache.touch(block.lease[0], BUILD_LEASE_SECONDS)
            block.leased_at = time.monotonic()


def check_drawing(*, user_id: int) -> None:
    """Raises LimitReached when `user_id`'s drawing budget is spent (what their requests
    drew in the last minute, this one's included so far). Free when a block of this
    thread reserved drawing for them and has some left."""
    _settle()
    if _prepaid_ms(user_id) > 0:
        return
    now = clock()
    window = spent_by_slot(user_id, now)
    if sum(window) >= _budget_ms():
        raise _spent_refusal(_retry_after(window, now, room_ms=1))


def _prepaid_ms(user_id: int) -> float:
    """What this thread's open blocks reserved for `user_id` and have not used yet."""
    return sum(b.prepaid_ms for b in _blocks() if b.user_id == user_id)


def _reserve(*, user_id: int, estimate: float, now: float, whole: bool) -> int:
    """Reserves `estimate` CPU seconds of the person's budget for one piece of work, or
    refuses it (LimitReached) when it would not fit in what is left of the budget now.
    Larger than the whole budget, it is refused for good when `whole` (an export that
    cannot be split: download its chapters one by one), else it reserves the whole
    budget (it waits for an idle minute, and is the one build that crosses it).
    Returns the milliseconds reserved."""
    wanted = math.ceil(estimate * 1000)
    if wanted > _budget_ms():
        if not whole:
            wanted = _budget_ms()
        else:
            raise LimitReached(
                Limit.DRAWING,
                gettext(
                    "This export needs about %(needed)s CPU seconds of drawing, more than "
                    "the %(budget)s a minute one account may use: download its chapters one "
                    "by one."
                )
                % {
                    "needed": f"{estimate:.1f}",
                    "budget": f"{settings.DRAWING_CPU_SECONDS_PER_MINUTE:g}",
                },
            )
    # Added first, then read: two requests at once each see the other's reservation
    # (both may be refused; never both let through past the budget).
    _add(user_id, wanted, now)
    window = spent_by_slot(user_id, now)
    if sum(window) > _budget_ms():
        _add(user_id, -wanted, now)
        window[-1] -= wanted
        raise _spent_refusal(_retry_after(window, now, room_ms=wanted))
    return wanted


def _take_lease(user_id: int) -> tuple[str, str]:
    """One of the person's DRAWING_BUILDS_IN_FLIGHT build slots, or LimitReached."""
    token = secrets.token_hex(8)
    deadline = time.monotonic() + settings.DRAWING_BUILD_WAIT_SECONDS
    while True:  # a slot comes free within DRAWING_BUILD_WAIT_SECONDS, or a refusal
        for n in range(max(1, settings.DRAWING_BUILDS_IN_FLIGHT)):
            key = f"drawing-build:{user_id}:{n}"
            if cache.add(key, token, timeout=BUILD_LEASE_SECONDS):
                return key, token
        if time.monotonic() >= deadline:
            break
        time.sleep(BUILD_POLL_SECONDS)
    raise LimitReached(
        Limit.DRAWING,
        ngettext(
            "%(n)s drawing of yours is being made (a page, an export, lettering); try "
            "again once it is done.",
            "%(n)s drawings of yours are being made (pages, exports, lettering); try "
            "again once one is done.",
            settings.DRAWING_BUILDS_IN_FLIGHT,
        )
        % {"n": settings.DRAWING_BUILDS_IN_FLIGHT},
        retry_after=BUILD_RETRY_SECONDS,
    )


# What a refusal for builds in flight tells a client to wait: a build takes seconds.
BUILD_RETRY_SECONDS = 2
# How often a build waiting for a slot looks again.
BUILD_POLL_SECONDS = 0.05


def _free_lease(lease: tuple[str, str]) -> None:
    key, token = lease
    if cache.get(key) == token:  # not one that expired and was taken by another build
        cache.delete(key)


@contextlib.contextmanager
def drawing(*, user_id: int, estimate: float = 0.0, whole: bool = False) -> Iterator[None]:
    """Counts the CPU time this thread spends in the block, drawing for `user_id` (a page,
    an export, a panel's lettering not in the cache, a touch-up's mask), against their
    DRAWING_CPU_SECONDS_PER_MINUTE over a rolling minute. Raises LimitReached before
    drawing when it would not fit; what is already built stays built.

    The outermost block of a request is one build: it holds one of the person's
    DRAWING_BUILDS_IN_FLIGHT slots while it draws, and reserves its `estimate` (CPU
    seconds, reckoned from what it will draw and letter) before it starts; it draws
    from that reservation and settles with what it really took when it ends (what it
    did not use goes back, what it took beyond is counted in the window). A build
    reckoned past the whole budget reserves the whole budget, unless `whole` (an
    export that cannot be split), which is refused for good.

    A nested block (a PDF builds its pages) takes no slot and draws from what the
    outer ones reserved; once that is used up it reserves its own estimate, and is
    checked as it opens: so a long export meets the budget at its next build.

    Drawing runs on the request's thread, so one person editing and reloading in a
    loop could otherwise keep a web process's CPU busy.
    """
    blocks = _blocks()
    outermost = not any(b.user_id == user_id for b in blocks)
    lease = _take_lease(user_id) if outermost else None
    try:
        check_drawing(user_id=user_id)
        now = clock()
        wanted = estimate - _prepaid_ms(user_id) / 1000
        reserved = (
            _reserve(user_id=user_id, estimate=wanted, now=now, whole=whole)
            if (wanted > 0 and estimate)
            else 0
        )
    except BaseException:
        if lease:
            _free_lease(lease)
        raise
    if not blocks:
        _drawing.mark = time.thread_time()
    block = _Block(user_id, prepaid_ms=reserved, reserved_at=now, lease=lease)
    block.leased_at = time.monotonic()
    blocks.append(block)
    try:
        yield
    finally:
        _settle(at_least_ms=1)
        blocks.pop()
        if lease:
            _free_lease(lease)
        if block.prepaid_ms >= 1:  # what the reservation did not use goes back, to its slot
            _add(user_id, -math.floor(block.prepaid_ms), block.reserved_at)
