"""The Celery queues: the contract between the code that sends work and the workers
that the Procfile starts (`-Q render`, `-Q speculative`)."""

from enum import StrEnum


class Queue(StrEnum):
    RENDER = "render"  # what a person is waiting for (and the app's other tasks)
    SPECULATIVE = "speculative"  # renders started ahead of a decision; capped concurrency
