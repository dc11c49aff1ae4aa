"""Celery tasks of the jobs: thin wrappers over rendering.py (through the one policy of
every render task, mangagen/render_kinds/failures.py) and recovery.py, each one
idempotent."""

import logging

from celery import shared_task

from mangagen.kernel.passing_faults import PASSING_FAULTS
from mangagen.kernel.render_retries import MAX_RENDER_RETRIES
from mangagen.observability import logs, metrics
from mangagen.render_kinds import failures

from . import recovery, rendering
from .attempts import Attempt
from .dispatch import EXPIRE_JOB, QUEUE_LOOKAHEAD, RENDER_PANEL

logger = logging.getLogger(__name__)


@shared_task(bind=True, name=RENDER_PANEL, max_retries=MAX_RENDER_RETRIES)
def render_panel(self, job_id: int, index: int, attempt: int) -> str:
    """One render of one panel, as its kind (rendering.attempt_kind), under the one
    policy of every render task. Redelivery after a lost worker renders again, charges
    once."""
    with logs.about(job=job_id, panel=index):
        ref = Attempt(job_id, index, attempt)
        outcome = failures.run(self, ref, rendering.attempt_kind)
        metrics.record_render(outcome)
        logger.info("Render of job %s panel %s attempt %s: %s", job_id, index, attempt, outcome)
        return outcome


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
