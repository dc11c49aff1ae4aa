"""The job event log: written in the state change's transaction, published on commit.

`seq` is assigned under the job's row lock (every caller holds it), so it
counts 1, 2, 3… with no gap. The channel layer is at-most-once; the log is
the truth, and clients that miss a message catch up from it.
"""

from __future__ import annotations

import logging
from enum import StrEnum

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from django.db.models import F

from . import publisher
from .models import Job, JobEvent

logger = logging.getLogger(__name__)


class EventType(StrEnum):
    """Every type of job event: the contract with the job page, the websocket's clients
    and the metrics: tests/test_contracts.py checks each emit names one of these,
    tests/test_docs.py that each is documented in docs/api.md."""

    JOB_STATE = "job.state"
    JOB_REBASED = "job.rebased"
    JOB_DONE = "job.done"
    PANEL_QUEUED = "panel.queued"
    PANEL_RENDERING = "panel.rendering"
    PANEL_PROVIDER = "panel.provider"  # where a render stands at a remote provider
    PANEL_READY = "panel.ready"
    PANEL_DELIVERED = "panel.delivered"
    PANEL_APPROVED = "panel.approved"
    PANEL_FAILED = "panel.failed"
    PANEL_RETRYING = "panel.retrying"
    PANEL_REQUEUED = "panel.requeued"  # sent again: its task or its worker was lost
    PANEL_DISCARDED = "panel.discarded"  # rendered for a job that had ended: GPU time wasted
    CREDITS = "credits"


def group_name(job_id: int) -> str:
    return f"job-{job_id}"


def emit(*, job: Job, type: EventType, data: dict) -> JobEvent:
    """Appends an event to the job's log; the caller holds the job's row lock.

    Under that lock the locked instance's count is the row's: one conditional
    UPDATE takes the next seq. (An instance another part of the transaction
    has already emitted past falls back to counting on the row.)"""
    seq = job.last_seq + 1
    if not Job.objects.filter(pk=job.pk, last_seq=job.last_seq).update(last_seq=seq):
        Job.objects.filter(pk=job.pk).update(last_seq=F("last_seq") + 1)
        seq = Job.objects.values_list("last_seq", flat=True).get(pk=job.pk)
    job.last_seq = seq
    event = JobEvent.objects.create(job=job, seq=job.last_seq, type=type, data=data)
    message = event.as_message()
    transaction.on_commit(lambda: publish(job.pk, message))
    return event


def publish(job_id: int, message: dict) -> None:
    """Fans an event out to the job's group; losing it is allowed, never fatal.

    A layer shared between processes gets it from the process's publisher
    (one loop, one connection pool, no wait here); an in-process one on the
    caller's loop."""
    try:
        layer = get_channel_layer()
        envelope = {"type": "job.event", "event": message}
        if layer is None:
            return
        if publisher.serves(layer):
            publisher.publisher_for(layer).send(group_name(job_id), envelope)
        else:
            async_to_sync(layer.group_send)(group_name(job_id), envelope)
    except Exception:  # the log has it; clients catch up from there
        logger.warning(
            "Could not publish event %s of job %s", message.get("seq"), job_id, exc_info=True
        )


def events_after(*, job: Job, after: int, limit: int = 1000) -> list[dict]:
    """The log after `after`, oldest first, each as `JobEvent.as_message` makes it (read
    as values: a late attach replays up to a thousand at a time, and model instances
    cost more than the query)."""
    rows = job.events.filter(seq__gt=after).order_by("seq")[:limit]
    return [
        {"seq": seq, "type": type_, "at": at.isoformat(), "data": data}
        for seq, type_, at, data in rows.values_list("seq", "type", "at", "data")
    ]
