"""The one retry rule of a render, a panel's or a character sheet's: a render error the
provider calls retryable is tried again, after 1, 2, 4 s, at most MAX_RENDER_RETRIES
times; then the render fails. (Faults that pass, a dropped connection, have their own
rule: mangagen/kernel/passing_faults.py.)"""

from __future__ import annotations

from collections.abc import Callable

MAX_RENDER_RETRIES = 3


def retry_if_retryable(
    task,
    *,
    exc: Exception,
    retryable: bool,
    queue: str | None = None,
    before_retry: Callable[[int], None] | None = None,
) -> None:
    """Raises the bound `task`'s retry when `retryable` and retries are left (on `queue`,
    when given, after calling `before_retry` with the countdown); returns otherwise, and
    the caller fails the render."""
    retries = task.request.retries
    if not retryable or retries >= task.max_retries:
        return
    countdown = 2**retries
    if before_retry is not None:
        before_retry(countdown)
    options = {"queue": queue} if queue else {}
    raise task.retry(exc=exc, countdown=countdown, **options) from exc
