"""What the studio lets go of with age: event logs and renders of jobs long ended.

A job's row, its panels and its holds stay (they are the money records and
what the admin figures are computed from); its event log goes once nobody
replays it, and its own copies of its renders a day after it ended: what it
delivered is kept by the comic (`KeptArt`, a copy of its own), and what it
never showed is never shown.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.core.cache import cache
from django.db import transaction

from mangagen.kernel import storage
from mangagen.storyboards.models import KeptArt

from .lettered_images import lettered_cache_key
from .lock_objects import lock_panels_with_images_under, try_lock_job
from .models import LIVE_STATES, Job, JobEvent, TouchUp

# An ended job's page may still be open in a tab, showing the job's own copies.
RENDERS_KEPT_AFTER_END = timedelta(days=1)


def prune_job_events(*, before: datetime) -> int:
    """Deletes the event logs of jobs that ended before `before`; returns how many events."""
    old = JobEvent.objects.filter(job__finished_at__lt=before).exclude(job__state__in=LIVE_STATES)
    deleted, _ = old.delete()
    return deleted


def prune_ended_job_renders(*, ended_before: datetime) -> int:
    """Deletes the render files (`renders/<job>/`: its renders and its touch-ups'
    masks) of jobs that ended before `ended_before`; returns how many files went. A
    folder of a job this database does not have is left alone (it may be another
    deployment's, sharing a bucket).

    A panel that showed its render is pointed at the comic's kept copy first
    (its job page keeps showing it); one that never showed it has no image.
    """
    ended = Job.objects.filter(pk__in=storage.numbered_folders("renders")).filter(
        finished_at__lt=ended_before
    )
    count = 0
    for job_id in ended.exclude(state__in=LIVE_STATES).values_list("pk", flat=True):
        images = _point_at_kept_copies(job_id=job_id, ended_before=ended_before)
        if images is None:
            continue  # gone meanwhile, with its comic (whose deletion takes its files)
        count += storage.delete_folder(f"renders/{job_id}")
        # Its touch-ups' masks went with the folder: no longer a picture of the person's.
        TouchUp.objects.filter(attempt__job_id=job_id).update(mask="", mask_bytes=0)
        cache.delete_many([lettered_cache_key(name) for name in images])
    return count


def _point_at_kept_copies(*, job_id: int, ended_before: datetime) -> list[str] | None:
    """Moves the job's panels off its own files; returns the names they had, or None
    when the job must keep them (it is live, or ended after `ended_before`)."""
    prefix = f"renders/{job_id}/"
    with transaction.atomic():
        job = try_lock_job(pk=job_id)
        if job is None or job.live or job.finished_at is None or job.finished_at >= ended_before:
            return None
        names: list[str] = []
        for panel in lock_panels_with_images_under(job=job, prefix=prefix):
            names.append(panel.image.name or "")
            kept = KeptArt.objects.filter(source=panel, attempt=panel.attempts).first()
            panel.image = kept.image.name if kept is not None and panel.shown else ""
            panel.save(update_fields=["image"])
    return names
