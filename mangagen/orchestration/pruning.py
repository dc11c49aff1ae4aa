"""Retention: what grows forever is pruned once it is RETENTION_DAYS old.

The pruners are named by the composition root (`RETENTION_PRUNERS` in
settings), so each app prunes its own records and none imports another's:
the studio drops the event logs of jobs long ended, speculation folds old
declined rows into daily counts. Jobs, holds, transfers and purchases (the
money records) are never pruned.

Files have shorter lives: an ended job's own copies of its renders go a day
after it ended (`jobs.retention.RENDERS_KEPT_AFTER_END`; the comic keeps what
it delivered). A deleted comic's files go when it is deleted
(mangagen/orchestration/comic_deletion.py).
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from django.conf import settings
from django.utils import timezone
from django.utils.module_loading import import_string

from mangagen.jobs.retention import RENDERS_KEPT_AFTER_END, prune_ended_job_renders

# The admin's widest figures (Speculation, "Last month") read 30 days of job
# events: a shorter RETENTION_DAYS would change them as it pruned.
MIN_RETENTION_DAYS = 30


def cutoff(*, now: datetime | None = None) -> datetime:
    """The UTC midnight RETENTION_DAYS back (at least MIN_RETENTION_DAYS): older
    records go, whole days at a time."""
    now = now or timezone.now()
    days = max(settings.RETENTION_DAYS, MIN_RETENTION_DAYS)
    day = (now - timedelta(days=days)).astimezone(UTC).date()
    return datetime.combine(day, time(), UTC)


def prune(*, now: datetime | None = None) -> dict[str, int]:
    """Runs every pruner against the cut-off, then lets go of ended jobs' render files;
    returns how many records (or files) each one let go."""
    now = now or timezone.now()
    before = cutoff(now=now)
    done = {path: import_string(path)(before=before) for path in settings.RETENTION_PRUNERS}
    done["render files of ended jobs"] = prune_ended_job_renders(
        ended_before=now - RENDERS_KEPT_AFTER_END
    )
    return done
