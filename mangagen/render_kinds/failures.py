"""The one exception policy of every render task, whatever its kind.

- A fault that passes (a dropped database connection, Redis away for a moment: the
  kernel's passing_faults.py): the render is idempotent, so it goes again shortly.
- A RenderError the provider calls retryable: tried again (the kernel's
  render_retries.py), the kind told first (`retrying`); otherwise, or past the retries,
  the render fails (`fail`: its hold released). The provider's own words go to the log
  and to operators; the person is told only what it means for them (`exc.public`).
- Anything else is a crash: the render fails with the plain failed-render sentence.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from mangagen.kernel.passing_faults import (
    MAX_FAULT_RETRIES,
    PASSING_FAULTS,
    backoff,
    forget_broken_connections,
)
from mangagen.kernel.queues import Queue
from mangagen.kernel.render_retries import retry_if_retryable
from mangagen.observability.metrics import RenderOutcome
from mangagen.renderers import RenderError
from mangagen.renderers.base import RENDER_FAILED

from . import worker
from .kind import RenderKind

logger = logging.getLogger(__name__)


def run(task, ref: Any, kind: RenderKind | Callable[[Any], RenderKind]) -> str:
    """Runs the bound Celery `task`'s render of `ref` through the worker path, as `kind`
    (or as the kind `kind(ref)` finds: asked under this same policy). Returns the
    outcome ("failed" once it failed); raises the task's retry."""
    queue = (task.request.delivery_info or {}).get("routing_key") or Queue.RENDER
    chosen = kind if isinstance(kind, RenderKind) else None
    try:
        chosen = chosen or kind(ref)
        return worker.perform(chosen, ref)
    except PASSING_FAULTS as exc:
        forget_broken_connections()
        countdown = backoff(task.request.retries)
        logger.warning(
            "Render of %s met %s (%s); again in %.1fs",
            _named(chosen, ref),
            type(exc).__name__,
            exc,
            countdown,
        )
        raise task.retry(
            exc=exc, countdown=countdown, queue=queue, max_retries=MAX_FAULT_RETRIES
        ) from exc
    except RenderError as exc:
        assert chosen is not None, "only a render raises RenderError"
        _retry_or_fail(task, chosen, ref, exc=exc, queue=queue)
        return RenderOutcome.FAILED
    except Exception as exc:
        logger.exception("Render of %s crashed", _named(chosen, ref))
        if chosen is None:
            raise  # its kind is unknown: nothing to fail (the sweeps send it again)
        chosen.fail(ref, error=RENDER_FAILED, detail=f"The renderer crashed: {exc}")
        return RenderOutcome.FAILED


def _retry_or_fail(task, kind: RenderKind, ref: Any, *, exc: RenderError, queue: str) -> None:
    def note_retry(countdown: int) -> None:
        logger.warning("Render of %s will be retried: %s", kind.describe(ref), exc)
        kind.retrying(ref, error=exc.public, retry_in=countdown)

    retry_if_retryable(task, exc=exc, retryable=exc.retryable, queue=queue, before_retry=note_retry)
    logger.warning("Render of %s failed: %s", kind.describe(ref), exc)
    kind.fail(ref, error=exc.public, detail=str(exc))


def _named(kind: RenderKind | None, ref: Any) -> str:
    return kind.describe(ref) if kind is not None else repr(ref)
