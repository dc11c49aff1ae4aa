"""The Celery application; configuration comes from Django settings (CELERY_*)."""

import os

from celery import Celery
from celery.signals import beat_init, setup_logging, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangagen.settings")

app = Celery("mangagen")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Every worker counts its tasks' outcomes and run times for /metrics.
import mangagen.observability.celery_metrics  # noqa: E402, F401


@setup_logging.connect
def use_django_logging(**kwargs) -> None:
    """Workers and beat log as the web does (settings.LOGGING: LOG_FORMAT, request ids)."""
    from logging.config import dictConfig

    from django.conf import settings

    dictConfig(settings.LOGGING)


@worker_ready.connect
def say_what_the_release_left(sender=None, **kwargs) -> None:
    """A worker that starts before `bin/release` has migrated the database says so."""
    from mangagen.observability.health import log_unreleased

    log_unreleased(f"The worker {getattr(sender, 'hostname', '')}".strip(), serves_static=False)


@beat_init.connect
def beat_says_what_the_release_left(**kwargs) -> None:
    from mangagen.observability.health import log_unreleased

    log_unreleased("Beat", serves_static=False)
