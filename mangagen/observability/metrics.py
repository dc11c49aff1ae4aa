"""Every metric family of the studio, in one place (the ledger's are `ledger/metrics.py`).

Counters and histograms are written by the process where things happen
(daphne, the Celery workers) and summed over every process of the machine
when Prometheus scrapes `/metrics` (prometheus_client's multiprocess mode,
`PROMETHEUS_MULTIPROC_DIR`). Gauges of shared state (queue depth, the GPU
pool) are read at scrape time instead (`collectors.py`). The names and label
values below are the contract of dashboards and alerts
(docs/grafana/mangagen.json): change them only with those.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from enum import StrEnum

from django.core.exceptions import ImproperlyConfigured
from prometheus_client import Counter, Histogram

# prometheus_client reads it from the environment when first imported (the project
# package imports this module before settings are read): a folder that is not there
# would fail every count, so say so at once.
_shared = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
if _shared and not os.path.isdir(_shared):
    raise ImproperlyConfigured(f"PROMETHEUS_MULTIPROC_DIR={_shared} is not a folder.")

RENDERS_TOTAL = "mangagen_renders_total"
RENDER_SECONDS = "mangagen_render_seconds"
SPECULATION_TOTAL = "mangagen_speculation_total"
SPECULATION_OUTCOMES_TOTAL = "mangagen_speculation_outcomes_total"
GPU_POOL_CONTAINERS = "mangagen_gpu_pool_containers"
GPU_POOL_WAITING = "mangagen_gpu_pool_waiting"
QUEUE_DEPTH = "mangagen_queue_depth"
QUEUE_UNACKED = "mangagen_queue_unacked"
CELERY_TASKS_TOTAL = "mangagen_celery_tasks_total"
CELERY_TASK_SECONDS = "mangagen_celery_task_seconds"
DB_CONNECTION_WAIT_SECONDS = "mangagen_db_connection_wait_seconds"
DB_CONNECTION_ERRORS_TOTAL = "mangagen_db_connection_errors_total"
LIMIT_REFUSALS_TOTAL = "mangagen_limit_refusals_total"
DRAWING_CPU_SECONDS_TOTAL = "mangagen_drawing_cpu_seconds_total"
JUDGE_TOTAL = "mangagen_judge_total"
JUDGE_SECONDS = "mangagen_judge_seconds"
JUDGE_REDRAWS_TOTAL = "mangagen_judge_redraws_total"
JUDGE_REDRAW_SECONDS_TOTAL = "mangagen_judge_redraw_seconds_total"
ROUGHS_TOTAL = "mangagen_roughs_total"
ROUGH_SECONDS = "mangagen_rough_seconds"
METRICS_SOURCE_UP = "mangagen_metrics_source_up"
METRICS_PROCESSES = "mangagen_metrics_multiprocess"
READING_PAGES_TOTAL = "mangagen_reading_pages_total"


class RenderOutcome(StrEnum):
    """How a render task ended (`perform_render`'s answer, or the task's verdict)."""

    DELIVERED = "delivered"  # shown to its confirmed job's owner at once (and paid)
    READY = "ready"  # rendered ahead (speculation, look-ahead): shown when reached, or never
    FAILED = "failed"  # failed for good; its hold released
    WITHDRAWN = "withdrawn"  # its job ended while it waited for a container or its boot
    CANCELLED_AT_PROVIDER = "cancelled_at_provider"  # withdrawn, and cancelled at the provider
    DISCARDED = "discarded"  # rendered for a job that had ended meanwhile
    DUPLICATE = "duplicate"  # another copy of the same attempt rendered it
    STALE = "stale"  # the panel had moved on before the task ran


class RoughOutcome(StrEnum):
    """How a rough's task ended (mangagen/roughs/kinds.py)."""

    READY = "ready"  # drawn and kept: the rough pages show it
    FAILED = "failed"  # failed for good (asking again draws it again)
    WITHDRAWN = "withdrawn"  # drawn again (another seed) before it was done
    DISCARDED = "discarded"  # drawn, but superseded or gone meanwhile
    STALE = "stale"  # nothing to draw by the time a worker had it


class RenderPhase(StrEnum):
    QUEUED = "queued"  # waiting for capacity, ours or the provider's
    COLD_START = "cold_start"  # a container booting
    RENDER = "render"  # drawing


class SpeculationDecision(StrEnum):
    STARTED = "started"
    DECLINED = "declined"


class SpeculationOutcome(StrEnum):
    """How a started speculation ended (a newer one replacing it counts as abandoned)."""

    ATTACHED = "attached"
    ABANDONED = "abandoned"
    EXPIRED = "expired"


class JudgeVerdict(StrEnum):
    """What the judge's check of a render came to (mangagen/jobs/judging.py)."""

    PASSED = "passed"  # scored at or over JUDGE_MIN_SCORE at once
    REDRAWN = "redrawn"  # drawn again (once or more) for a score under it
    UNCHECKED = "unchecked"  # no verdict (the judge erred, timed out, answered nonsense)
    KEPT_LOW = "kept_low"  # under it, and no redraw was possible (none left, no pool room)


class TaskOutcome(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    RETRIED = "retried"


# Seconds: a warm render takes one or two, a cold start 15-30, a queue under load minutes.
RENDER_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 3, 5, 8, 12, 20, 30, 45, 60, 120, 300)
TASK_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
# A pooled connection is handed over in microseconds; waiting means the pool is too small.
CONNECTION_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30)

renders = Counter(RENDERS_TOTAL, "Render tasks by how they ended.", ["outcome"])
render_seconds = Histogram(
    RENDER_SECONDS, "What each phase of a render took.", ["phase"], buckets=RENDER_BUCKETS
)
speculations = Counter(
    SPECULATION_TOTAL,
    "Review's asks to speculate: started, or declined with the reason.",
    ["decision", "reason"],
)
speculation_outcomes = Counter(
    SPECULATION_OUTCOMES_TOTAL, "How started speculations ended.", ["outcome"]
)
celery_tasks = Counter(CELERY_TASKS_TOTAL, "Celery tasks by how they ended.", ["task", "outcome"])
celery_task_seconds = Histogram(
    CELERY_TASK_SECONDS, "How long Celery tasks ran.", ["task"], buckets=TASK_BUCKETS
)
db_connection_wait = Histogram(
    DB_CONNECTION_WAIT_SECONDS,
    "Time a request or task waited for a database connection (from the pool, or a new one).",
    buckets=CONNECTION_BUCKETS,
)
db_connection_errors = Counter(
    DB_CONNECTION_ERRORS_TOTAL,
    "Database connections that could not be had (pool timeout, server away).",
)
limit_refusals = Counter(
    LIMIT_REFUSALS_TOTAL,
    "Requests a per-person limit refused (429), by the limit's error code "
    "(mangagen/kernel/quotas.py).",
    ["limit"],
)
drawing_cpu_seconds = Counter(
    DRAWING_CPU_SECONDS_TOTAL,
    "CPU seconds spent drawing for people's requests (pages, exports, lettering not in the "
    "cache), the time each person's DRAWING_CPU_SECONDS_PER_MINUTE bounds.",
)
judge = Counter(JUDGE_TOTAL, "Renders the judge checked, by what it came to.", ["verdict"])
judge_seconds = Histogram(
    JUDGE_SECONDS, "How long each call of the judge took.", buckets=RENDER_BUCKETS
)
judge_redraws = Counter(
    JUDGE_REDRAWS_TOTAL,
    "Renders drawn again because the judge scored them low: the operator's cost, never "
    "charged to the person.",
)
judge_redraw_seconds = Counter(
    JUDGE_REDRAW_SECONDS_TOTAL, "Seconds of rendering the judge's redraws took (operator cost)."
)
roughs = Counter(ROUGHS_TOTAL, "Roughs by how their task ended.", ["outcome"])
rough_seconds = Histogram(
    ROUGH_SECONDS,
    "What a rough took from its worker's start to its picture, its wait for the GPU pool "
    "included (the operator's GPU seconds are on Admin → Speculation).",
    buckets=RENDER_BUCKETS,
)
# Reading links' page images, answered ahead of Django (so in no django_http_* family).
reading_pages = Counter(
    READING_PAGES_TOTAL,
    "Reading links' page images asked for, by answer (mangagen/publishing/serving.py).",
    ["answer"],
)
READING_ANSWERS = ("page", "not_modified", "redirect", "not_found", "throttled")

# Every label value a dashboard shows exists from the start, at zero (Prometheus'
# guidance for labelled metrics whose values are known: a rate or an alert on a series
# that is missing until something happens sees nothing instead of 0). In every process
# that imports this module; the families whose values other apps know are started by
# them: the refusals' limits (quotas.py), the decline reasons (speculation/receivers.py),
# the Celery tasks (celery_metrics.py, in each worker), the ledger's (start_ledger_at_zero).
for _outcome in RenderOutcome:
    renders.labels(outcome=_outcome)
for _phase in RenderPhase:
    render_seconds.labels(phase=_phase)
for _ended in SpeculationOutcome:
    speculation_outcomes.labels(outcome=_ended)
for _verdict in JudgeVerdict:
    judge.labels(verdict=_verdict)
for _rough in RoughOutcome:
    roughs.labels(outcome=_rough)

speculations.labels(decision=SpeculationDecision.STARTED, reason="")
for _answer in READING_ANSWERS:
    reading_pages.labels(answer=_answer)

# The ledger's counted operations (`ledger.metrics.counted` and its sweep's "expire"):
# tests/stack/test_metrics_from_zero.py holds this list to what ledger/ counts.
LEDGER_OPERATIONS = ("grant", "revoke", "authorize", "capture", "release", "expire")


def start_ledger_at_zero() -> None:
    """`ledger_operations_total` at zero for every operation and result (ok, error, and
    each refusal's code): the ledger knows no Prometheus contract of the studio's, so the
    studio starts it (from its app's `ready`, in every process)."""
    from ledger.errors import LedgerCode
    from ledger.metrics import ERROR, OK, operations

    for op in LEDGER_OPERATIONS:
        for result in (OK, ERROR, *LedgerCode):
            operations.labels(op=op, result=result)


def record_render(outcome: str) -> None:
    """Counts one render task's end; `outcome` is what perform_render answered (or failed)."""
    renders.labels(outcome=outcome).inc()


def phases_of(metadata: Mapping, seconds: float) -> dict[str, float]:
    """A render's phases in seconds: the renderer's `metadata["phases"]` (every shipped
    renderer reports them), or, for a renderer that reports only its queue wait and cold
    start, the render as the rest of its `seconds`."""
    phases = metadata.get("phases")
    if phases:
        return {str(name): float(value) for name, value in phases.items() if value is not None}
    queued = float(metadata.get("queued_seconds") or 0.0)
    cold = float(metadata.get("cold_start_seconds") or 0.0)
    found = {RenderPhase.RENDER.value: max(0.0, seconds - queued - cold)}
    if "queued_seconds" in metadata:
        found[RenderPhase.QUEUED.value] = queued
    if "cold_start_seconds" in metadata:
        found[RenderPhase.COLD_START.value] = cold
    return found


def observe_render_phases(metadata: Mapping, seconds: float) -> None:
    """Observes a finished render's phases (those of the contract; others are dropped)."""
    known = {phase.value for phase in RenderPhase}
    for phase, value in phases_of(metadata, seconds).items():
        if phase in known:
            render_seconds.labels(phase=phase).observe(value)


def record_speculation(*, decision: SpeculationDecision, reason: str = "") -> None:
    speculations.labels(decision=decision, reason=reason).inc()


def record_speculation_outcome(outcome: SpeculationOutcome, count: int = 1) -> None:
    speculation_outcomes.labels(outcome=outcome).inc(count)


def record_judge(verdict: JudgeVerdict) -> None:
    judge.labels(verdict=verdict).inc()


def record_judge_redraw(seconds: float) -> None:
    judge_redraws.inc()
    judge_redraw_seconds.inc(seconds)
