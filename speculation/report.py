"""What speculation buys and costs, computed from the records, for the admin page."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta

from django.conf import settings
from django.db.models import Count, Q, Sum
from django.utils import timezone

from ledger.models import Hold
from mangagen.jobs.events import EventType
from mangagen.jobs.models import Job, JobEvent, JobPanel, PanelState, RenderAttempt
from mangagen.observability.metrics import RenderOutcome
from mangagen.roughs.models import Rough

from .models import DeclinedDaily, Outcome, Speculation

# The longest period the admin page shows; pruning keeps every row inside it.
WIDEST_PERIOD = timedelta(days=30)
# Speculations that ended one way or the other: the hit rate's denominator.
DECIDED = (Outcome.HIT, Outcome.ABANDONED, Outcome.EXPIRED, Outcome.INVALIDATED)


@dataclass
class Period:
    label: str
    since: datetime
    until: datetime
    outcomes: dict[str, int] = field(default_factory=dict)
    declined: dict[str, int] = field(default_factory=dict)
    hit_rate: float | None = None
    renders_wasted: int = 0
    credits_held: int = 0
    credits_released: int = 0
    credits_captured: int = 0
    gpu_cost_wasted: float = 0.0
    latency_hidden_seconds: float = 0.0
    ttfp_attached: dict[str, float | None] = field(default_factory=dict)
    ttfp_fresh: dict[str, float | None] = field(default_factory=dict)
    always_warm_cost: float = 0.0
    keep_warm_pings_cost: float = 0.0
    lookahead_started: int = 0
    lookahead_accepted: int = 0
    cancelled_at_provider: int = 0  # renders nobody would see, stopped at the provider
    provider_seconds_saved: float = 0.0  # about how much of its time that spared
    judged: int = 0  # renders the judge gave a verdict on (the latest of each panel)
    judge_accepted: int = 0  # of them, accepted at once (no redraw, not low)
    judge_redraws: int = 0  # renders drawn again for the judge: the operator's, never charged
    judge_redraw_cost: float = 0.0
    # GPU seconds (cold starts and drawing, as the provider ran them): every final render,
    # the speculative ones among them, and the roughs (free to people: the operator's).
    gpu_seconds_finals: float = 0.0
    gpu_seconds_speculation: float = 0.0
    gpu_seconds_roughs: float = 0.0
    roughs_drawn: int = 0
    finals_drawn: int = 0  # panels' renders that landed (a redo's too)
    finals_from_rough: int = 0  # of them, drawn from the panel's rough

    @property
    def roughs_share(self) -> float | None:
        """Roughs' GPU seconds as a share of the finals'."""
        return (
            self.gpu_seconds_roughs / self.gpu_seconds_finals if self.gpu_seconds_finals else None
        )

    @property
    def from_rough_rate(self) -> float | None:
        return self.finals_from_rough / self.finals_drawn if self.finals_drawn else None

    @property
    def lookahead_rate(self) -> float | None:
        return self.lookahead_accepted / self.lookahead_started if self.lookahead_started else None

    @property
    def judge_acceptance(self) -> float | None:
        return self.judge_accepted / self.judged if self.judged else None


def report(*, now: datetime | None = None) -> list[Period]:
    now = now or timezone.now()
    return [
        period(label=label, since=now - span, until=now)
        for label, span in (
            ("Last day", timedelta(days=1)),
            ("Last week", timedelta(days=7)),
            ("Last month", WIDEST_PERIOD),
        )
    ]


def period(*, label: str, since: datetime, until: datetime) -> Period:
    result = Period(label=label, since=since, until=until)
    specs = Speculation.objects.filter(created_at__gte=since, created_at__lt=until)
    result.outcomes = dict(specs.values_list("outcome").annotate(n=Count("pk")))
    result.declined = dict(
        specs.filter(outcome=Outcome.DECLINED).values_list("reason").annotate(n=Count("pk"))
    )
    _add_pruned_declines(result)
    decided = sum(result.outcomes.get(o, 0) for o in DECIDED)
    result.hit_rate = result.outcomes.get(Outcome.HIT, 0) / decided if decided else None

    started = Job.objects.filter(speculation__in=specs.exclude(outcome=Outcome.DECLINED))
    # Panel one's holds, one per render attempt (its record, not the ledger's free text).
    holds = RenderAttempt.objects.filter(job__in=started, index=1).aggregate(
        held=Count("pk"),
        released=Count("pk", filter=Q(hold__state__in=[Hold.State.RELEASED, Hold.State.EXPIRED])),
        captured=Count("pk", filter=Q(hold__state=Hold.State.CAPTURED)),
    )
    result.credits_held = holds["held"]
    result.credits_released = holds["released"]
    result.credits_captured = holds["captured"]

    hits = started.filter(speculation__outcome=Outcome.HIT, confirmed_at__isnull=False)
    for first in JobPanel.objects.filter(job__in=hits, index=1).select_related("job"):
        confirmed_at = first.job.confirmed_at
        if confirmed_at is None:  # the filter says otherwise; the type does not know it
            continue
        if first.rendered_at and first.rendered_at <= confirmed_at:
            result.latency_hidden_seconds += first.render_seconds or 0
        elif first.render_started_at and first.render_started_at < confirmed_at:
            result.latency_hidden_seconds += (
                confirmed_at - first.render_started_at
            ).total_seconds()

    # GPU work done for nothing: renders that finished, or were discarded mid-way (a
    # render withdrawn before it got a container cost nothing), for jobs no one kept.
    missed = started.exclude(speculation__outcome__in=[Outcome.HIT, Outcome.LIVE])
    result.renders_wasted = (
        JobPanel.objects.filter(job__in=missed, rendered_at__isnull=False).count()
        + JobEvent.objects.filter(job__in=missed, type=EventType.PANEL_DISCARDED).count()
    )
    result.gpu_cost_wasted = result.renders_wasted * settings.RENDER_COST_USD
    cancelled = RenderAttempt.objects.filter(
        job__in=started, outcome=RenderOutcome.CANCELLED_AT_PROVIDER
    ).aggregate(n=Count("pk"), saved=Sum("provider_seconds_saved"))
    result.cancelled_at_provider = cancelled["n"]
    result.provider_seconds_saved = cancelled["saved"] or 0.0

    attached, fresh = [], []
    confirmed = Job.objects.filter(confirmed_at__gte=since, confirmed_at__lt=until)
    for job in confirmed.select_related("speculation").prefetch_related("panels"):
        panel_one = next((p for p in job.panels.all() if p.index == 1), None)
        if panel_one is None or panel_one.delivered_at is None or job.confirmed_at is None:
            continue
        if hasattr(job, "speculation"):
            attached.append((panel_one.delivered_at - job.confirmed_at).total_seconds())
        else:
            fresh.append((panel_one.delivered_at - job.created_at).total_seconds())
    result.ttfp_attached = _percentiles(attached)
    result.ttfp_fresh = _percentiles(fresh)

    days = (until - since).total_seconds() / 86400
    result.always_warm_cost = settings.GPU_WARM_USD_PER_DAY * days
    pings = (until - since).total_seconds() / max(settings.RENDER_IDLE_SECONDS, 1)
    result.keep_warm_pings_cost = pings * settings.RENDER_COST_USD

    ahead = JobPanel.objects.filter(lookahead=True, queued_at__gte=since, queued_at__lt=until)
    result.lookahead_started = ahead.count()
    result.lookahead_accepted = ahead.filter(
        state__in=[PanelState.DELIVERED, PanelState.APPROVED]
    ).count()
    _add_judge(result)
    _add_gpu_seconds(result)
    return result


def _gpu_seconds(phases: object) -> float:
    if not isinstance(phases, dict):
        return 0.0
    return float(phases.get("cold_start") or 0) + float(phases.get("render") or 0)


def _add_gpu_seconds(result: Period) -> None:
    """What the GPU ran in the period, three ways: the finals (every render attempt that
    ended with phases), those of speculative jobs, and the roughs, with the share of the
    finals drawn from a rough."""
    attempts = RenderAttempt.objects.filter(
        hold__created_at__gte=result.since, hold__created_at__lt=result.until
    ).exclude(phases={})
    for phases, speculative in attempts.values_list("phases", "job__speculation").iterator():
        seconds = _gpu_seconds(phases)
        result.gpu_seconds_finals += seconds
        if speculative is not None:
            result.gpu_seconds_speculation += seconds
    roughs = Rough.objects.filter(drawn_at__gte=result.since, drawn_at__lt=result.until)
    drawn = roughs.aggregate(n=Count("pk"), seconds=Sum("gpu_seconds"))
    result.roughs_drawn = drawn["n"]
    result.gpu_seconds_roughs = drawn["seconds"] or 0.0
    finals = JobPanel.objects.filter(rendered_at__gte=result.since, rendered_at__lt=result.until)
    counted = finals.aggregate(n=Count("pk"), from_rough=Count("pk", filter=Q(from_rough=True)))
    result.finals_drawn = counted["n"]
    result.finals_from_rough = counted["from_rough"]


def _add_judge(result: Period) -> None:
    """The judge beside speculation's waste: its acceptance rate, and its redraws as
    the operator's cost (a panel's check is of its latest render)."""
    checks = JobPanel.objects.filter(
        rendered_at__gte=result.since, rendered_at__lt=result.until, judge_check__isnull=False
    ).values_list("judge_check", flat=True)
    for check in checks.iterator():
        if not isinstance(check, dict):
            continue
        result.judged += 1
        redraws = int(check.get("redraws") or 0)
        result.judge_redraws += redraws
        if not redraws and not check.get("low"):
            result.judge_accepted += 1
    result.judge_redraw_cost = result.judge_redraws * settings.RENDER_COST_USD


def _add_pruned_declines(result: Period) -> None:
    """Declined speculations already folded into daily counts (speculation/retention.py):
    the days wholly inside the period count, as their rows did."""
    first = result.since.astimezone(UTC).date()
    if datetime.combine(first, time(), UTC) < result.since:
        first += timedelta(days=1)
    last = result.until.astimezone(UTC).date() - timedelta(days=1)
    pruned = (
        DeclinedDaily.objects.filter(day__gte=first, day__lte=last)
        .values_list("reason")
        .annotate(n=Sum("count"))
    )
    for reason, n in pruned:
        result.declined[reason] = result.declined.get(reason, 0) + n
        result.outcomes[Outcome.DECLINED] = result.outcomes.get(Outcome.DECLINED, 0) + n


def _percentiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"n": 0, "p50": None, "p95": None}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"n": len(ordered), "p50": statistics.median(ordered), "p95": p95}


@dataclass
class Hour:
    start: datetime
    hit_rate: float | None
    ttfp_p50: float | None  # Generate → panel one, attached and fresh together


@dataclass
class Chart:
    """The last day, hour by hour, as points for a small inline SVG (0..width, 0..height)."""

    hours: list[Hour]
    width: int = 480
    height: int = 120
    hit_points: str = ""
    ttfp_points: str = ""
    ttfp_max: float = 0.0


def hourly(*, now: datetime | None = None, hours: int = 24) -> Chart:
    now = now or timezone.now()
    top = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    rows = []
    for i in range(hours, 0, -1):
        start, end = top - timedelta(hours=i), top - timedelta(hours=i - 1)
        outcomes = dict(
            Speculation.objects.filter(created_at__gte=start, created_at__lt=end)
            .values_list("outcome")
            .annotate(n=Count("pk"))
        )
        decided = sum(outcomes.get(o, 0) for o in DECIDED)
        times = [
            (first.delivered_at - (job.confirmed_at or job.created_at)).total_seconds()
            for job in Job.objects.filter(confirmed_at__gte=start, confirmed_at__lt=end)
            .prefetch_related("panels")
            .only("pk", "confirmed_at", "created_at")
            for first in job.panels.all()
            if first.index == 1 and first.delivered_at
        ]
        rows.append(
            Hour(
                start=start,
                hit_rate=outcomes.get(Outcome.HIT, 0) / decided if decided else None,
                ttfp_p50=statistics.median(times) if times else None,
            )
        )
    chart = Chart(hours=rows)
    chart.ttfp_max = max((h.ttfp_p50 for h in rows if h.ttfp_p50 is not None), default=0.0)
    step = chart.width / max(hours - 1, 1)

    def points(values: list[float | None], scale: float) -> str:
        return " ".join(
            f"{i * step:.1f},{chart.height - (v / scale) * chart.height:.1f}"
            for i, v in enumerate(values)
            if v is not None and scale
        )

    chart.hit_points = points([h.hit_rate for h in rows], 1.0)
    chart.ttfp_points = points([h.ttfp_p50 for h in rows], chart.ttfp_max or 1.0)
    return chart
