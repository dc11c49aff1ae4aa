"""Celery tasks of character sheets: thin wrappers over services."""

import logging

from celery import shared_task

from mangagen.kernel.passing_faults import (
    MAX_FAULT_RETRIES,
    PASSING_FAULTS,
    backoff,
    forget_broken_connections,
)
from mangagen.kernel.render_retries import MAX_RENDER_RETRIES, retry_if_retryable
from mangagen.renderers import RenderError
from mangagen.renderers.base import RENDER_FAILED

from . import services
from .dispatch import RENDER_SHEET

logger = logging.getLogger(__name__)


@shared_task(bind=True, name=RENDER_SHEET, max_retries=MAX_RENDER_RETRIES)
def render_sheet(self, sheet_id: int) -> str:
    """One render of a character sheet, on the render queue through the same GPU pool."""
    try:
        return services.perform_sheet_render(sheet_id=sheet_id)
    except PASSING_FAULTS as exc:
        # A dropped connection or a Redis blip: the sheet's render is idempotent; again.
        forget_broken_connections()
        countdown = backoff(self.request.retries)
        raise self.retry(exc=exc, countdown=countdown, max_retries=MAX_FAULT_RETRIES) from exc
    except RenderError as exc:
        retry_if_retryable(self, exc=exc, retryable=exc.retryable)
        # The provider's words for the log; what it means for the person on the sheet.
        logger.warning("Render of sheet %s failed: %s", sheet_id, exc)
        services.fail_sheet_render(sheet_id=sheet_id, error=exc.public, detail=str(exc))
        return "failed"
    except Exception as exc:
        logger.exception("Render of sheet %s crashed", sheet_id)
        services.fail_sheet_render(
            sheet_id=sheet_id, error=RENDER_FAILED, detail=f"The renderer crashed: {exc}"
        )
        return "failed"
