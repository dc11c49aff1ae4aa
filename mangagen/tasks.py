"""The project's own periodic tasks (the apps' live in their `tasks.py`)."""

from celery import shared_task

from mangagen.orchestration import pruning as retention


@shared_task(name="mangagen.tasks.prune")
def prune() -> dict[str, int]:
    """Daily: prune what is older than RETENTION_DAYS (see mangagen/orchestration/pruning.py)."""
    return retention.prune()
