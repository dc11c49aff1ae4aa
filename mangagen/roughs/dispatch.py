"""Sends the roughs' Celery task, by name, once the transaction commits (services.py
never imports the worker's code, as in mangagen/jobs/dispatch.py).

Roughs go to the `speculative` queue, with the work started ahead of a decision: the
`render` queue is for what a person waits for. `robust=True`: a broker that is down
loses the message, not the request; a rough whose task was lost is stuck, and asking
again draws it again (selectors.py `stuck`).
"""

from __future__ import annotations

from django.db import transaction

from mangagen.celery import app as celery_app
from mangagen.kernel.queues import Queue

DRAW_ROUGH = "mangagen.roughs.tasks.draw_rough"


def send_rough(args: tuple[int], queue: Queue) -> None:
    """Sends one rough's draw to `queue` now."""
    celery_app.send_task(DRAW_ROUGH, args=args, queue=queue)


def draw_on_commit(*, rough_id: int) -> None:
    transaction.on_commit(lambda: send_rough((rough_id,), queue=Queue.SPECULATIVE), robust=True)


def withdraw_on_commit(*, ticket: str) -> None:
    """A rough superseded before it was drawn leaves the GPU pool's queue (or stops
    booting its container) once the transaction commits."""

    def withdraw() -> None:
        from mangagen.renderers.gpu_pool import GpuPool

        GpuPool().withdraw(ticket)

    transaction.on_commit(withdraw, robust=True)
