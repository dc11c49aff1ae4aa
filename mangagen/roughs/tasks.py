"""Celery tasks of roughs: a thin wrapper over the one worker path."""

from celery import shared_task

from mangagen.kernel.render_retries import MAX_RENDER_RETRIES
from mangagen.render_kinds import failures

from .dispatch import DRAW_ROUGH
from .kinds import ROUGH


@shared_task(bind=True, name=DRAW_ROUGH, max_retries=MAX_RENDER_RETRIES)
def draw_rough(self, rough_id: int) -> str:
    """One rough, drawn by the provider's draft model in the GPU pool's lowest queue,
    under the same policy as every render (mangagen/render_kinds/failures.py)."""
    return failures.run(self, rough_id, ROUGH)
