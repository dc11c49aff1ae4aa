"""Learning the provider: each render's phases, per renderer and model, and what the
GPU pool predicts finish times from.

`record` keeps the phases of every render that reached its end (the newest
`WINDOW` per renderer and model, in the database: shared by every worker,
kept across restarts). `current` is what was observed of the configured
renderer: the median cold start of recent renders that had one (a whole boot:
one only waited the end of is left out), the median render time, and how
many renders that is. Until there are `MIN_SAMPLES` of each, the settings
speak instead (RENDER_COLD_START_SECONDS, RENDER_SECONDS): they are only the
prior. It is cached a few seconds (speculation asks for it on every Review).
"""

from __future__ import annotations

import contextlib
import statistics
from dataclasses import asdict, dataclass

from django.conf import settings
from django.core.cache import cache
from redis.exceptions import RedisError

from .base import ProviderState, RenderResult, Verb
from .models import RenderSample

WINDOW = 200
MIN_SAMPLES = 3
CACHE_SECONDS = 10


@dataclass(frozen=True)
class ProviderStats:
    """What is known of a provider's timings (`manage.py renderer_stats` prints it)."""

    renderer: str
    model: str
    cold_start_seconds: float
    render_seconds: float
    samples: int  # renders observed (each gives a render time)
    cold_starts: int  # of which paid a whole cold start
    queued_seconds: float  # the median wait for capacity, for the admin page

    def line(self) -> dict:
        """The JSON line of `renderer_stats`."""
        return asdict(self)


def record(result: RenderResult) -> None:
    """Keeps a finished render's phases (a renderer that reports none is left out)."""
    phases = result.metadata.get("phases")
    if not isinstance(phases, dict):
        return
    renderer = str(result.metadata.get("provider") or result.renderer)[:32]
    model = str(result.metadata.get("model") or "")[:200]
    RenderSample.objects.create(
        renderer=renderer,
        model=model,
        queued=float(phases.get("queued") or 0),
        cold_start=float(phases.get("cold_start") or 0),
        render=float(phases.get("render") or 0),
        partial_boot=bool(result.metadata.get("partial_boot")),
    )
    kept = RenderSample.objects.filter(renderer=renderer, model=model).order_by("-id")
    oldest = kept.values_list("id", flat=True)[WINDOW : WINDOW + 1]
    if oldest:
        RenderSample.objects.filter(renderer=renderer, model=model, id__lte=oldest[0]).delete()


def observed(*, renderer: str, model: str) -> ProviderStats:
    """What the recent renders of `renderer` and `model` show, read from the database."""
    rows = list(
        RenderSample.objects.filter(renderer=renderer, model=model)
        .order_by("-id")
        .values_list("queued", "cold_start", "render", "partial_boot")[:WINDOW]
    )
    renders = [r[2] for r in rows]
    boots = [r[1] for r in rows if r[1] > 0 and not r[3]]
    return ProviderStats(
        renderer=renderer,
        model=model,
        cold_start_seconds=_median(boots, settings.RENDER_COLD_START_SECONDS),
        render_seconds=_median(renders, settings.RENDER_SECONDS),
        samples=len(renders),
        cold_starts=len(boots),
        queued_seconds=_median([r[0] for r in rows], 0.0),
    )


def current() -> ProviderStats:
    """What was observed of the renderer that draws panels (cached a few seconds; read
    from the database when the cache, Redis, cannot answer)."""
    from .registry import provider_for, renderer_for

    name = provider_for(Verb.RENDER)
    key = f"renderers:observed:{name}"
    with contextlib.suppress(RedisError):
        found = cache.get(key)
        if isinstance(found, ProviderStats):
            return found
    stats = observed(renderer=name, model=renderer_for(Verb.RENDER).model)
    with contextlib.suppress(RedisError):
        cache.set(key, stats, timeout=CACHE_SECONDS)
    return stats


def saved_seconds(stats: ProviderStats, *, state: str, phases: dict) -> float:
    """About how many seconds of the provider's time cancelling a render saved: the rest
    of its boot (if it was waiting for a worker) and of its render."""
    booted = float(phases.get("cold_start") or 0)
    rendered = float(phases.get("render") or 0)
    if state == ProviderState.RENDERING:
        return max(0.0, stats.render_seconds - rendered)
    # Only a wait long enough to be a boot is counted as one (a short `starting` may
    # have been a warm worker's moment).
    boot_left = 0.0
    if state == ProviderState.BOOTING:
        boot_left = max(0.0, stats.cold_start_seconds - booted)
    return boot_left + stats.render_seconds


def _median(values: list[float], prior: float) -> float:
    return round(statistics.median(values), 3) if len(values) >= MIN_SAMPLES else prior
