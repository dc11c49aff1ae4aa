"""Celery task outcomes and run times, counted in the worker that runs each task.

Connected when the Celery app is made (`mangagen/celery.py`), so every
worker counts; `/metrics` sums the workers (multiprocess mode).
"""

from __future__ import annotations

import time

from celery.signals import (
    task_failure,
    task_postrun,
    task_prerun,
    task_retry,
    task_success,
    worker_ready,
)

from . import metrics
from .metrics import TaskOutcome

_START = "_mangagen_started"


def _name(sender) -> str:
    return getattr(sender, "name", None) or str(sender)


def start_at_zero(app) -> None:
    """Every task of the app (Celery's own aside) and outcome at zero, so a rate or an
    alert on a task that has not run yet sees 0, not nothing."""
    for name in app.tasks:
        if name.startswith("celery."):
            continue
        metrics.celery_task_seconds.labels(task=name)
        for outcome in TaskOutcome:
            metrics.celery_tasks.labels(task=name, outcome=outcome)


@worker_ready.connect
def _ready(sender=None, **kwargs) -> None:
    """In each worker, once its tasks are registered (they are counted where they run)."""
    if sender is not None:
        start_at_zero(sender.app)


@task_prerun.connect
def _started(sender=None, task=None, **kwargs) -> None:
    if task is not None:
        setattr(task.request, _START, time.monotonic())


@task_postrun.connect
def _finished(sender=None, task=None, **kwargs) -> None:
    started = getattr(getattr(task, "request", None), _START, None)
    if started is not None:
        metrics.celery_task_seconds.labels(task=_name(sender)).observe(time.monotonic() - started)


@task_success.connect
def _succeeded(sender=None, **kwargs) -> None:
    metrics.celery_tasks.labels(task=_name(sender), outcome=TaskOutcome.SUCCEEDED).inc()


@task_failure.connect
def _failed(sender=None, **kwargs) -> None:
    metrics.celery_tasks.labels(task=_name(sender), outcome=TaskOutcome.FAILED).inc()


@task_retry.connect
def _retried(sender=None, **kwargs) -> None:
    metrics.celery_tasks.labels(task=_name(sender), outcome=TaskOutcome.RETRIED).inc()
