"""Celery tasks of the jobs: thin wrappers over services, each one idempotent."""

import logging

from celery import shared_task

from mangagen.queues import Queue
from mangagen.renderers import RenderError
from mangagen.renderers.base import RENDER_FAILED

from . import services
from .dispatch import EXPIRE_JOB, QUEUE_LOOKAHEAD, RENDER_PANEL
from .models import RenderOutcome

logger = logging.getLogger(__name__)

MAX_RENDER_RETRIES = 3


@shared_task(bind=True, name=RENDER_PANEL, max_retries=MAX_RENDER_RETRIES)
def render_panel(self, job_id: int, index: int, attempt: int) -> str:
    """One render of one panel. Redelivery after a lost worker renders again, charges once."""
    try:
        return services.perform_render(job_id=job_id, index=index, attempt=attempt)
    except RenderError as exc:
        # The provider's own words go to the log and to operators; the person is told
        # only what it means for them (exc.public).
        if exc.retryable and self.request.retries < self.max_retries:
            countdown = 2**self.request.retries
            logger.warning("Render of job %s panel %s will be retried: %s", job_id, index, exc)
            services.note_render_retry(
                job_id=job_id, index=index, attempt=attempt, error=exc.public, retry_in=countdown
            )
            queue = (self.request.delivery_info or {}).get("routing_key") or Queue.RENDER
            raise self.retry(exc=exc, countdown=countdown, queue=queue) from exc
        services.fail_render(
            job_id=job_id, index=index, attempt=attempt, error=exc.public, detail=str(exc)
        )
        return RenderOutcome.FAILED
    except Exception as exc:
        logger.exception("Render of job %s panel %s crashed", job_id, index)
        services.fail_render(
            job_id=job_id,
            index=index,
            attempt=attempt,
            error=RENDER_FAILED,
            detail=f"The renderer crashed: {exc}",
        )
        return RenderOutcome.FAILED


@shared_task(name=QUEUE_LOOKAHEAD)
def queue_lookahead(job_id: int) -> int:
    """Places the look-ahead of a job that Generate attached (off the click's request)."""
    return services.queue_lookahead(job_id=job_id)


@shared_task(name=EXPIRE_JOB)
def expire_job(job_id: int) -> bool:
    """Runs at a job's deadline (confirm_by or the TTL)."""
    return services.expire_job_if_due(job_id=job_id)


@shared_task(name="mangagen.jobs.tasks.sweep_jobs")
def sweep_jobs() -> dict:
    """The periodic backstop: deadlines whose task was lost, renders whose worker was lost."""
    return {
        "expired": services.expire_due_jobs(),
        "requeued": services.requeue_stuck_renders(),
    }


@shared_task(name="mangagen.jobs.tasks.requeue_lost_renders")
def requeue_lost_renders() -> int:
    """Every few seconds: renders whose worker stopped beating are sent again."""
    return services.requeue_lost_renders()
