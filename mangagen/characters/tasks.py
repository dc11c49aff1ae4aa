"""Celery tasks of character sheets: thin wrappers over the one worker path."""

from celery import shared_task

from mangagen.kernel.render_retries import MAX_RENDER_RETRIES
from mangagen.render_kinds import failures

from .dispatch import RENDER_SHEET
from .kinds import SHEET


@shared_task(bind=True, name=RENDER_SHEET, max_retries=MAX_RENDER_RETRIES)
def render_sheet(self, sheet_id: int) -> str:
    """One render of a character sheet, on the render queue through the same GPU pool and
    under the same policy as a panel's (mangagen/render_kinds/failures.py)."""
    return failures.run(self, sheet_id, SHEET)
