"""The Celery application; configuration comes from Django settings (CELERY_*)."""

import os

from celery import Celery
from celery.signals import setup_logging

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
