"""Sends the jobs' Celery tasks, by name, once the transaction commits.

The state machine (decisions.py, rendering.py, attempts.py, recovery.py, steps.py) never
imports the worker's code (tasks.py imports it): it names the task and the
queue (steps.queue_for), and Celery's router does the rest. `robust=True`: a
broker that is down loses the message, not the request; the sweeps send a
render that never started again (recovery.requeue_stuck_renders) and expire
a job whose deadline task was lost (recovery.expire_due_jobs).
"""

from __future__ import annotations

from datetime import datetime

import redis
from django.conf import settings
from django.db import transaction

from mangagen.celery import app as celery_app
from mangagen.kernel import broker
from mangagen.kernel.queues import Queue

RENDER_PANEL = "mangagen.jobs.tasks.render_panel"
EXPIRE_JOB = "mangagen.jobs.tasks.expire_job"
QUEUE_LOOKAHEAD = "mangagen.jobs.tasks.queue_lookahead"


def send_render(args: tuple[int, int, int], queue: Queue) -> None:
    """Sends one render (job, index, attempt) to `queue` now."""
    celery_app.send_task(RENDER_PANEL, args=args, queue=queue)


def send_expire(args: tuple[int], eta: datetime) -> None:
    """Sends the deadline task of a job, to run at `eta`."""
    celery_app.send_task(EXPIRE_JOB, args=args, eta=eta)


def send_lookahead(args: tuple[int]) -> None:
    """Sends the look-ahead of a job (its next panels' holds and renders) to be placed now."""
    celery_app.send_task(QUEUE_LOOKAHEAD, args=args, queue=Queue.RENDER)


def waiting() -> dict[str, int]:
    """Messages waiting in each queue; every queue counts as holding one when the broker
    cannot be read (then nothing is taken for lost)."""
    try:
        return broker.holdings(broker.quick_client(settings.CELERY_BROKER_URL))[0]
    except redis.RedisError:
        return {str(queue): 1 for queue in Queue}


def lookahead_on_commit(*, job_id: int) -> None:
    """Has the job's look-ahead placed by a worker once the transaction commits."""
    transaction.on_commit(lambda: send_lookahead((job_id,)), robust=True)


def render_on_commit(*, job_id: int, index: int, attempt: int, queue: Queue) -> None:
    """Enqueues the render of this attempt on `queue` when the transaction commits."""
    args = (job_id, index, attempt)
    transaction.on_commit(lambda: send_render(args, queue=queue), robust=True)


def expire_on_commit(*, job_id: int, eta: datetime) -> None:
    """Schedules the job's deadline task at `eta` when the transaction commits."""
    transaction.on_commit(lambda: send_expire((job_id,), eta=eta), robust=True)
