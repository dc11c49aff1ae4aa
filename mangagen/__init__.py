"""Mangagen: the project package (settings, urls, asgi, celery) and the studio."""

from .celery import app as celery_app

__all__ = ["celery_app"]
