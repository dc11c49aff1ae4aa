"""Per-person caps, so one account cannot grow the database, the job queue or the
operator's chat bill without bound. A refused request changes nothing.

Drafting with a chat model (`DRAFTER=openai`, and translations with
`TRANSLATOR=openai`) costs the operator per call, so it has a daily quota
per person rather than a credit price: credits pay for
renders a person sees, and charging for a draft they may throw away would
make the first step of every comic cost money. The free rule-based drafter
(`DRAFTER=rules`) has no quota.

The caps on comics and live jobs are counted, not locked: two requests at the
same instant may both pass, so a person can end one over. They bound growth;
they are not money, which the ledger guards exactly.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from enum import StrEnum

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone
from django.utils.translation import gettext

from mangagen.errors import ApplicationError
from mangagen.observability import metrics


class Limit(StrEnum):
    """The `error` code of each refusal (the API answers 429)."""

    STORYBOARDS = "too_many_storyboards"
    SERIES = "too_many_series"
    LIBRARY = "library_full"
    LIVE_JOBS = "too_many_live_jobs"
    DRAFTS = "draft_quota"
    DRAWING = "drawing_budget"


class LimitReached(ApplicationError):
    """A refusal; each is made to be raised, so it is counted as it is made
    (mangagen_limit_refusals_total)."""

    status = 429
    codes = Limit

    def __init__(self, limit: Limit, detail: str, *, retry_after: int | None = None):
        super().__init__(detail)
        metrics.limit_refusals.labels(limit=limit).inc()
        self.code = limit
        self.retry_after = retry_after

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)} if self.retry_after else {}


for _limit in Limit:  # every code on the dashboard from the start, at zero
    metrics.limit_refusals.labels(limit=_limit)


def check_storyboards(*, owner) -> None:
    """Raises LimitReached when `owner` already has MAX_STORYBOARDS_PER_PERSON."""
    from mangagen.storyboards.models import Storyboard

    cap = settings.MAX_STORYBOARDS_PER_PERSON
    if Storyboard.objects.filter(owner=owner).count() >= cap:
        raise LimitReached(
            Limit.STORYBOARDS,
            gettext(
                "You have %(cap)s comics, the most one account may keep; "
                "delete one to start another."
            )
            % {"cap": cap},
        )


def check_series(*, owner) -> None:
    """Raises LimitReached when `owner` already has limits.MAX_SERIES series."""
    from mangagen.series.models import Series
    from mangagen.storyboards import limits

    if Series.objects.filter(owner=owner).count() >= limits.MAX_SERIES:
        raise LimitReached(
            Limit.SERIES,
            gettext(
                "You have %(cap)s series, the most one account may keep; "
                "delete one to start another."
            )
            % {"cap": limits.MAX_SERIES},
        )


def check_library(*, entries) -> None:
    """Raises LimitReached when a library list (`entries`: the person's cast members, or
    their places, as a queryset) already holds limits.MAX_LIBRARY."""
    from mangagen.storyboards import limits

    if entries.count() >= limits.MAX_LIBRARY:
        raise LimitReached(
            Limit.LIBRARY,
            gettext(
                "Your library keeps at most %(cap)s characters and as many places; "
                "remove one to save another."
            )
            % {"cap": limits.MAX_LIBRARY},
        )


def stored_picture_bytes(*, owner_id: int) -> int:
    """The bytes of the pictures PICTURE_BYTES_PER_PERSON counts for one person: their
    own sheet pictures, copies of sheets into another comic (rendered ones included: a
    rendered sheet with no hold of its own is a copy, and copies cost nothing), their
    places' pictures, and their library's copies. A paid render's own picture is bounded
    by its price, not here."""
    from django.db.models import Q, Sum

    from mangagen.characters.models import CharacterSheet, SheetSource
    from mangagen.library.models import CastSheet, SavedPlace
    from mangagen.places.models import Place

    def total(rows, field: str) -> int:
        return rows.aggregate(total=Sum(field))["total"] or 0

    sheets = CharacterSheet.objects.filter(storyboard__owner_id=owner_id).exclude(image="")
    free = Q(source=SheetSource.UPLOADED) | Q(hold__isnull=True)
    places = Place.objects.filter(storyboard__owner_id=owner_id).exclude(picture="")
    saved = SavedPlace.objects.filter(owner_id=owner_id).exclude(picture="")
    return (
        total(sheets.filter(free), "bytes")
        + total(places, "picture_bytes")
        + total(CastSheet.objects.filter(member__owner_id=owner_id), "bytes")
        + total(saved, "picture_bytes")
    )


def check_picture_bytes(*, owner_id: int, adding: int, freeing: int = 0) -> None:
    """Raises Refused (`sheet_uploads_full`, 400) when the person's stored pictures
    (stored_picture_bytes), less the `freeing` bytes the same change lets go, plus the
    `adding` bytes it stores, would pass PICTURE_BYTES_PER_PERSON; then the caller
    changes nothing. Counted, not locked, as the other caps are."""
    from mangagen.characters.errors import Refused
    from mangagen.characters.models import UploadProblem

    cap = settings.PICTURE_BYTES_PER_PERSON
    stored = stored_picture_bytes(owner_id=owner_id)
    if stored - freeing + adding > cap:
        raise Refused(
            UploadProblem.UPLOADS_FULL,
            gettext(
                "Your pictures (sheets, places and the copies in your library and comics) "
                "would take more than %(mb)s MB in all; delete pictures you no longer use, "
                "then try again."
            )
            % {"mb": cap // (1024 * 1024)},
            extra={"budget": "PICTURE_BYTES_PER_PERSON", "limit_bytes": cap},
        )


def check_live_jobs(*, user, storyboard) -> None:
    """Raises LimitReached when `user` already renders MAX_LIVE_JOBS_PER_PERSON other comics."""
    from mangagen.jobs.models import LIVE_STATES, Job

    cap = settings.MAX_LIVE_JOBS_PER_PERSON
    others = Job.objects.filter(owner=user, confirmed=True, state__in=LIVE_STATES).exclude(
        storyboard=storyboard
    )
    if others.count() >= cap:
        raise LimitReached(
            Limit.LIVE_JOBS,
            gettext("%(cap)s of your comics are rendering already; finish or stop one first.")
            % {"cap": cap},
        )


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


_drawing = threading.local()


def clock() -> float:
    """Seconds since the epoch: the drawing budget's minutes (tests fix it)."""
    return time.time()


@contextlib.contextmanager
def drawing(*, user_id: int) -> Iterator[None]:
    """Counts the CPU time this thread spends in the block, drawing for `user_id` (a page,
    an export, a panel's lettering not in the cache), against their
    DRAWING_CPU_SECONDS_PER_MINUTE. Raises LimitReached before drawing once this
    minute's budget is spent; what is already built stays built and is served freely.

    Drawing runs on the request's thread, so one person editing and reloading in a
    loop could otherwise keep a web process's CPU busy. Nested blocks (a PDF builds
    its pages) are checked each, and counted once, by the outermost.
    """
    now = clock()
    key = f"drawing:{user_id}:{int(now // 60)}"
    spent_ms = cache.get(key) or 0
    if spent_ms >= settings.DRAWING_CPU_SECONDS_PER_MINUTE * 1000:
        raise LimitReached(
            Limit.DRAWING,
            gettext(
                "You have asked for a lot of drawing this minute (pages, exports, lettering); "
                "what is drawn already is still there. Try again in a moment."
            ),
            retry_after=max(int(60 - now % 60), 1),
        )
    if getattr(_drawing, "depth", 0):
        yield
        return
    _drawing.depth = 1
    started = time.thread_time()
    try:
        yield
    finally:
        _drawing.depth = 0
        used_ms = max(round((time.thread_time() - started) * 1000), 1)
        metrics.drawing_cpu_seconds.inc(used_ms / 1000)
        # add() starts the minute's count, incr() is atomic in Redis.
        if not cache.add(key, used_ms, timeout=120):
            with contextlib.suppress(ValueError):  # the minute's key expired meanwhile
                cache.incr(key, used_ms)
