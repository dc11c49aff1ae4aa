"""The worker's side of a job: a render attempt of a panel run as its kind (kinds/: a
panel, a redo, a touch-up) through the one worker path (mangagen/render_kinds/:
prepare → draw → keep, attempts.py says how for a job's panel), what a render tells
its job on the way (a retry, a failure), and the look-ahead a worker places.
"""

from __future__ import annotations

from django.db import transaction

from mangagen.observability.metrics import RenderOutcome
from mangagen.render_kinds import worker

from .attempts import Attempt, AttemptKind
from .kinds.panel import PANEL
from .kinds.touchup import TOUCH_UP
from .lock_objects import try_lock_job
from .models import TouchUp
from .steps import queue_lookahead_renders


def attempt_kind(ref: Attempt) -> AttemptKind:
    """The kind a render attempt is: a touch-up when it carries one, otherwise a panel's
    render (a redo is drawn and kept as a panel is; only its price differs)."""
    touch = TouchUp.objects.filter(
        attempt__job_id=ref.job_id, attempt__index=ref.index, attempt__attempt=ref.attempt
    )
    return TOUCH_UP if touch.exists() else PANEL


def perform_render(*, job_id: int, index: int, attempt: int) -> RenderOutcome:
    """Renders one attempt of one panel, as its kind says. Safe to run twice (a
    redelivered task).

    Returns what happened: a RenderOutcome — "delivered", "ready", "withdrawn" (its
    job ended while it waited for a container, or for a provider that could not stop
    it), "cancelled_at_provider" (its job ended and the render was stopped at the
    provider) or "discarded" (it rendered for a job that had moved on) — or "stale" (the
    panel had moved on before it ran) or "duplicate" (another copy of this attempt is
    alive). Raises RenderError for the task to retry or fail. How the attempt ended, and
    its phases, are kept on its RenderAttempt; the render task counts the answer in
    `mangagen_renders_total{outcome}` and the phases in `mangagen_render_seconds`.
    """
    ref = Attempt(job_id, index, attempt)
    return RenderOutcome(worker.perform(attempt_kind(ref), ref))


def fail_render(*, job_id: int, index: int, attempt: int, error: str, detail: str = "") -> None:
    """A render failed for good: its hold released, the panel marked, the person may
    retry (see AttemptKind.fail)."""
    ref = Attempt(job_id, index, attempt)
    attempt_kind(ref).fail(ref, error=error, detail=detail)


def queue_lookahead(*, job_id: int) -> int:
    """Places a confirmed live job's look-ahead now (the task `lookahead_on_commit`
    sends). Idempotent: a panel with an open hold is skipped. Returns how many
    renders it placed."""
    with transaction.atomic():
        job = try_lock_job(pk=job_id)
        if job is None or not job.live or not job.confirmed:
            return 0
        return queue_lookahead_renders(job=job)
