"""Deleting a comic: its jobs, sheets, places, pages, reading links and every file of it.

A comic spans the storyboards, its jobs, its sheets, its places and its pages,
so its deletion lives here, above all of them. Deleted content must be gone:
every file of the comic (its jobs' renders, its kept takes, its sheets, its
places' pictures, its page builds, its roughs) leaves the media storage, and its lettered
pictures leave the cache. What the person kept in their library is a copy of
its own and stays.
"""

from __future__ import annotations

import logging

from django.core.cache import cache
from django.db import transaction

from mangagen.characters.services import end_sheet_renders
from mangagen.jobs.lettered_images import lettered_cache_key
from mangagen.jobs.models import LIVE_STATES, JobPanel
from mangagen.jobs.services import cancel_job
from mangagen.kernel import storage
from mangagen.publishing.services import end_links_of, end_series_link
from mangagen.series.models import Series
from mangagen.series.services import end_series
from mangagen.storyboards.lock_objects import try_lock_storyboard
from mangagen.storyboards.models import KeptArt, Storyboard

logger = logging.getLogger(__name__)

# The folders of a comic's own files, each named by the storyboard's id.
COMIC_FOLDERS = ("renders/kept", "pages", "sheets", "places", "roughs")


def delete_comic(*, storyboard: Storyboard) -> None:
    """Deletes a storyboard with its jobs, sheets, places and pages, in one transaction.

    The storyboard's row is locked first (as Generate locks it before starting
    a job), so no job can start between the cancelling and the deleting; live
    jobs are cancelled and sheets still rendering end, their holds released.
    Once that is committed, every file of the comic leaves the storage. A
    storyboard deleted meanwhile is nothing to do.
    """
    with transaction.atomic():
        # The comic's row first, without its key (storyboards/lock_objects.py): a render
        # being delivered meanwhile only references the row (its kept take's foreign
        # key) and must not wait for this lock while holding its job's, which the
        # cancelling below waits for.
        storyboard = try_lock_storyboard(pk=storyboard.pk)
        if storyboard is None:
            return
        for job in storyboard.jobs.filter(state__in=LIVE_STATES).order_by("pk"):
            cancel_job(job=job, reason="Its storyboard was deleted.")
        end_sheet_renders(storyboard=storyboard, reason="Its storyboard was deleted.")
        job_ids = list(storyboard.jobs.values_list("pk", flat=True))
        images = set(
            JobPanel.objects.filter(job__storyboard=storyboard)
            .exclude(image="")
            .values_list("image", flat=True)
        )
        images |= set(KeptArt.objects.filter(storyboard=storyboard).values_list("image", flat=True))
        folders = [f"renders/{job_id}" for job_id in job_ids]
        folders += [f"{root}/{storyboard.pk}" for root in COMIC_FOLDERS]
        end_links_of(storyboard=storyboard)  # its reading links answer 404 from the commit
        storyboard.delete()
        transaction.on_commit(lambda: _forget(folders=folders, images=sorted(images)), robust=True)


def delete_series(*, series: Series) -> None:
    """Deletes a series (its chapters stay, as standalone comics) and ends its reading
    link, whose files leave the storage once committed."""
    with transaction.atomic():
        end_series_link(series=series)
        end_series(series=series)


def _forget(*, folders: list[str], images: list[str]) -> None:
    for folder in folders:
        storage.delete_folder(folder)
    cache.delete_many([lettered_cache_key(name) for name in images])
