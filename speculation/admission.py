"""Admission by expected benefit, and the budgets that bound what speculation may cost.

A speculative render is worth starting only if it is likely to be done
before the person clicks Generate. The pool predicts when it would finish
(the queue ahead of it, free and warm containers, cold starts, render time:
the cold start and render time observed of the provider, per renderer and
model, with RENDER_COLD_START_SECONDS and RENDER_SECONDS as the prior);
the dwell on Review — from the speculate call to Generate or leaving —
is learned from recent visits, starting from a prior (a log-normal around
SPECULATION_DWELL_PRIOR_SECONDS, worth DWELL_PRIOR_WEIGHT visits) so a new
install behaves sensibly and a few odd visits cannot swing it. Only visits
whose speculation started a job count (a declined ask costs nothing, so a
loop of them could write any dwell it liked), and one person counts for at
most DWELL_PER_PERSON of them: no account can poison everyone's dwell.

Budgets: a person who has abandoned more than SPECULATION_PERSON_ABANDONS_PER_HOUR
speculations in the last hour needs a recent hit rate of at least
SPECULATION_PERSON_MIN_HIT_RATE to get more; everyone together gets at most
SPECULATION_BUDGET_PER_HOUR speculative renders an hour; and people who have
never attached to a speculation share a small part of the in-flight cap, so
fifty one-credit accounts cannot fill it.
"""

from __future__ import annotations

import contextlib
import math
import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta
from statistics import NormalDist
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, F, Q, Window
from django.db.models.functions import Coalesce, RowNumber
from django.utils import timezone
from redis.exceptions import RedisError

from mangagen.jobs.models import LIVE_STATES
from mangagen.renderers import observed
from mangagen.renderers.gpu_pool import GpuPool, Priority

from .models import Outcome, Speculation

if TYPE_CHECKING:
    from django.contrib.auth.models import User

DWELL_PRIOR_WEIGHT = 20
DWELL_PRIOR_SIGMA = 0.8
DWELL_SAMPLE = 500
DWELL_PER_PERSON = 10
DWELL_WINDOW = timedelta(days=7)
_DWELL_CACHE_KEY = "speculation:dwell-sample"


@dataclass(frozen=True)
class Dwell:
    """Seconds people stayed on Review: recent visits plus the prior's pseudo-visits."""

    observed: tuple[float, ...]
    prior: tuple[float, ...]

    def chance_longer_than(self, seconds: float) -> float:
        both = self.observed + self.prior
        return sum(d > seconds for d in both) / len(both)

    def quantile(self, q: float) -> float:
        both = sorted(self.observed + self.prior)
        return both[min(len(both) - 1, int(q * len(both)))]

    @property
    def median(self) -> float:
        return statistics.median(self.observed + self.prior)


def prior_dwell() -> tuple[float, ...]:
    median = settings.SPECULATION_DWELL_PRIOR_SECONDS
    normal = NormalDist(math.log(median), DWELL_PRIOR_SIGMA)
    return tuple(
        round(math.exp(normal.inv_cdf((i + 0.5) / DWELL_PRIOR_WEIGHT)), 2)
        for i in range(DWELL_PRIOR_WEIGHT)
    )


def observed_dwell(*, now=None) -> tuple[float, ...]:
    """Recent Review visits that started a job and ended (Generate, or leaving):
    seconds from the ask; each person's latest DWELL_PER_PERSON at most."""
    now = now or timezone.now()
    ended = Coalesce("generate_at", "left_at")
    rows = (
        Speculation.objects.filter(created_at__gte=now - DWELL_WINDOW, job__isnull=False)
        .filter(Q(generate_at__isnull=False) | Q(left_at__isnull=False))
        .annotate(end=ended)
        .filter(end__gte=F("created_at"))
        .annotate(nth=Window(RowNumber(), partition_by=[F("user_id")], order_by=F("pk").desc()))
        .filter(nth__lte=DWELL_PER_PERSON)
        .order_by("-pk")
        .values_list("created_at", "end")[:DWELL_SAMPLE]
    )
    return tuple(round((end - start).total_seconds(), 2) for start, end in rows)


def dwell() -> Dwell:
    """The learned dwell (cached a few seconds: it moves slowly; read from the
    database when the cache, Redis, cannot answer)."""
    try:
        observed = cache.get(_DWELL_CACHE_KEY)
    except RedisError:
        observed = None
    if observed is None:
        observed = observed_dwell()
        with contextlib.suppress(RedisError):
            cache.set(_DWELL_CACHE_KEY, observed, timeout=15)
    return Dwell(observed=tuple(observed), prior=prior_dwell())


@dataclass(frozen=True)
class Forecast:
    finish_seconds: float  # when the render would be done, from now
    chance: float  # that the person is still on Review then
    confirmed_waiting: int  # confirmed renders waiting for a container


def forecast() -> Forecast:
    """Predicts a speculative render asked for now, against the learned dwell, from what
    was observed of the provider (its cold start and render time; the settings until
    there are renders to learn from)."""
    pool, provider = GpuPool(), observed.current()
    finish = pool.predict_finish(
        priority=Priority.SPECULATIVE,
        render_seconds=provider.render_seconds,
        cold_start_seconds=provider.cold_start_seconds,
    )
    waiting = pool.state(render_seconds=provider.render_seconds).waiting_confirmed
    return Forecast(
        finish_seconds=finish,
        chance=dwell().chance_longer_than(finish),
        confirmed_waiting=waiting,
    )


# --- budgets ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PersonBudget:
    abandoned_last_hour: int
    recent_hit_rate: float | None
    allowed: bool


def person_budget(user: User, *, now: datetime | None = None) -> PersonBudget:
    now = now or timezone.now()
    abandoned = Speculation.objects.filter(
        user=user,
        outcome__in=[Outcome.ABANDONED, Outcome.EXPIRED],
        created_at__gte=now - timedelta(hours=1),
    ).count()
    recent = list(
        Speculation.objects.filter(
            user=user, outcome__in=[Outcome.HIT, Outcome.ABANDONED, Outcome.EXPIRED]
        )
        .order_by("-pk")
        .values_list("outcome", flat=True)[:20]
    )
    rate = sum(o == Outcome.HIT for o in recent) / len(recent) if recent else None
    allowed = abandoned < settings.SPECULATION_PERSON_ABANDONS_PER_HOUR or (
        rate is not None and rate >= settings.SPECULATION_PERSON_MIN_HIT_RATE
    )
    return PersonBudget(abandoned_last_hour=abandoned, recent_hit_rate=rate, allowed=allowed)


def global_used(*, now=None) -> int:
    """Speculative renders started in the last hour (each speculation's panel one)."""
    now = now or timezone.now()
    return Speculation.objects.filter(
        job__isnull=False, created_at__gte=now - timedelta(hours=1)
    ).count()


def unproven_cap() -> int:
    return max(1, settings.SPECULATION_MAX_INFLIGHT * settings.SPECULATION_UNPROVEN_SHARE // 100)


def proven(user: User) -> bool:
    """Has this person ever clicked Generate on a speculation of theirs?"""
    return Speculation.objects.filter(user=user, outcome=Outcome.HIT).exists()


def unproven_inflight() -> int:
    """Live speculations of people with no hit yet."""
    hitters = Speculation.objects.filter(outcome=Outcome.HIT).values("user_id")
    return (
        Speculation.objects.filter(outcome=Outcome.LIVE, job__state__in=LIVE_STATES)
        .exclude(user_id__in=hitters)
        .count()
    )


def people_over_abandon_budget(*, now=None) -> int:
    """People past their abandoned-speculation count in the last hour (for the admin)."""
    now = now or timezone.now()
    return (
        Speculation.objects.filter(
            outcome__in=[Outcome.ABANDONED, Outcome.EXPIRED],
            created_at__gte=now - timedelta(hours=1),
        )
        .values("user_id")
        .annotate(n=Count("pk"))
        .filter(n__gte=settings.SPECULATION_PERSON_ABANDONS_PER_HOUR)
        .count()
    )
