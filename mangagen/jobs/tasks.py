"""Celery tasks of the jobs: thin wrappers over rendering.py and recovery.py, each one
idempotent."""

import logging

from celery import shared_task

from mangagen.kernel.passing_faults import (
    MAX_FAULT_RETRIES,
    PASSING_FAULTS,
    backoff,
    forget_broken_connections,
)
from mangagen.kernel.queues import Queue
from mangagen.kernel.render_retries import MAX_RENDER_RETRIES, retry_if_retryable
from mangagen.observability import logs, metrics
from mangagen.observability.metrics import RenderOutcome
from mangagen.renderers import RenderError
from mangagen.renderers.base import RENDER_FAILED

from . import recovery, rendering
from .dispatch import EXPIRE_JOB, QUEUE_LOOKAHEAD, RENDER_PANEL

logger = logging.getLogger(__name__)


@shared_task(bind=True, name=RENDER_PANEL, max_retries=MAX_RENDER_RETRIES)
def render_panel(self, job_id: int, index: int, attempt: int) -> str:
    """One render of one panel. Redelivery after a lost worker renders again, charges once."""
    with logs.about(job=job_id, panel=index):
        outcome = _render(self, job_id, index, attempt)
        metrics.record_render(outcome)
        logger.info("Render of job %s panel %s attempt %s: %s", job_id, index, attempt, outcome)
        return outcome


def _render(task, job_id: int, index: int, attempt: int) -> str:
    queue = (task.request.delivery_info or {}).get("routing_key") or Queue.RENDER
    try:
        return rendering.perform_render(job_id=job_id, index=index, attempt=attempt)
    except PASSING_FAULTS as exc:
        # A dropped connection or a Redis blip: the render is idempotent, so it goes again.
        forget_broken_connections()
        countdown = backoff(task.request.retries)
        logger.warning(
            "Render of job %s panel %s met %s (%s); again in %.1fs",
            job_id,
            index,
            type(exc).__name__,
            exc,
            countdown,
        )
        raise task.retry(
            exc=exc, countdown=countdown, queue=queue, max_retries=MAX_FAULT_RETRIES
        ) from exc
    except RenderError as exc:
        # The provider's own words go to the log and to operators; the person is told
        # only what it means for them (exc.public).
        error = exc

        def note_retry(countdown: int) -> None:
            logger.warning("Render of job %s panel %s will be retried: %s", job_id, index, error)
            rendering.note_render_retry(
                job_id=job_id, index=index, attempt=attempt, error=error.public, retry_in=countdown
            )

        retry_if_retryable(
            task, exc=exc, retryable=exc.retryable, queue=queue, before_retry=note_retry
        )
        rendering.fail_render(
            job_id=job_id, index=index, attempt=attempt, error=exc.public, detail=str(exc)
        )
        return RenderOutcome.FAILED
    except Exception as exc:
        logger.exception("Render of job %s panel %s crashed", job_id, index)
        rendering.fail_render(
            job_id=job_id,
            index=index,
            attempt=attempt,
            error=RENDER_FAILED,
            detail=f"The renderer crashed: {exc}",
        )
        return RenderOutcome.FAILED


@shared_task(name=QUEUE_LOOKAHEAD, autoretry_for=PASSING_FAULTS, retry_backoff=1, max_retries=8)
def queue_lookahead(job_id: int) -> int:
    """Places the look-ahead of a job that Generate attached (off the click's request)."""
    return rendering.queue_lookahead(job_id=job_id)


@shared_task(name=EXPIRE_JOB, autoretry_for=PASSING_FAULTS, retry_backoff=1, max_retries=8)
def expire_job(job_id: int) -> bool:
    """Runs at a job's deadline (confirm_by or the TTL)."""
    return recovery.expire_job_if_due(job_id=job_id)


@shared_task(name="mangagen.jobs.tasks.sweep_jobs")
def sweep_jobs() -> dict:
    """The periodic backstop: deadlines whose task was lost, renders whose worker was lost."""
    return {
        "expired": recovery.expire_due_jobs(),
        "requeued": recovery.requeue_stuck_renders(),
    }


@shared_task(name="mangagen.jobs.tasks.requeue_lost_renders")
def requeue_lost_renders() -> int:
    """Every few seconds: renders whose worker stopped beating are sent again."""
    return recovery.requeue_lost_renders()
