"""Sends the character sheets' Celery task, by name, once the transaction commits.

services.py never imports the worker's code (tasks.py imports the services), as in
mangagen/jobs/dispatch.py. `robust=True`: a broker that is down loses the message,
not the request; a sheet whose render was lost is replaced when asked for again
(`request_sheet`, `is_lost`).
"""

from __future__ import annotations

from django.db import transaction

from mangagen.celery import app as celery_app
from mangagen.kernel.queues import Queue

RENDER_SHEET = "mangagen.characters.tasks.render_sheet"


def send_render(args: tuple[int], queue: Queue) -> None:
    """Sends one sheet's render to `queue` now."""
    celery_app.send_task(RENDER_SHEET, args=args, queue=queue)


def render_on_commit(*, sheet_id: int) -> None:
    """Enqueues the sheet's render on the `render` queue when the transaction commits
    (a sheet is what its owner waits for: confirmed work)."""
    transaction.on_commit(lambda: send_render((sheet_id,), queue=Queue.RENDER), robust=True)
