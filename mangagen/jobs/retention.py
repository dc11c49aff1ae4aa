"""What the studio lets go of with age: the event logs of jobs long ended.

A job's row, its panels and its holds stay (they are the money records and
what the admin figures are computed from); only its event log goes, which
nobody replays once the job has ended.
"""

from __future__ import annotations

from datetime import datetime

from .models import LIVE_STATES, JobEvent


def prune_job_events(*, before: datetime) -> int:
    """Deletes the event logs of jobs that ended before `before`; returns how many events."""
    old = JobEvent.objects.filter(job__finished_at__lt=before).exclude(job__state__in=LIVE_STATES)
    deleted, _ = old.delete()
    return deleted
