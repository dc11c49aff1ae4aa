"""Celery tasks of the ledger: thin wrappers over services."""

import logging

from celery import shared_task

from . import services

logger = logging.getLogger(__name__)


@shared_task(name="ledger.tasks.expire_stale_holds")
def expire_stale_holds() -> int:
    """The periodic sweep (beat, every HOLD_SWEEP_SECONDS)."""
    released = services.expire_stale_holds()
    if released:
        logger.info("Stale-hold sweep released %d hold(s).", released)
    return released
