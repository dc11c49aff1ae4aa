"""Row locks of render jobs: the one way a service locks a job, its panels, or the
panels' open holds.

In the studio's lock order (mangagen/storyboards/lock_objects.py) a job comes
after its comic's row, which a path that creates, confirms, replaces or ends a
job holds already (the worker's and the sweeps' other paths start here, at the
job's row); then the job's panels, by index; then the panels' pending holds,
by pk; then the ledger's own rows.

A job's and a panel's row are locked FOR UPDATE (a hold's, of the hold alone).
"""

from __future__ import annotations

from ledger.models import Hold

from .models import Job, JobPanel, PanelState


def lock_job(*, pk: int) -> Job:
    """The job's row, locked. Raises Job.DoesNotExist."""
    return Job.objects.select_for_update().get(pk=pk)


def try_lock_job(*, pk: int) -> Job | None:
    """The job's row, locked; None if it is gone (deleted with its comic meanwhile)."""
    return Job.objects.select_for_update().filter(pk=pk).first()


def lock_panel(*, job: Job, index: int) -> JobPanel:
    """The job's panel at `index`, locked. Raises JobPanel.DoesNotExist."""
    return job.panels.select_for_update().get(index=index)


def try_lock_panel(*, job: Job, index: int) -> JobPanel | None:
    """The job's panel at `index`, locked; None if the job has none there."""
    return job.panels.select_for_update().filter(index=index).order_by("index").first()


def lock_panel_by_pk(*, job: Job, pk: int) -> JobPanel:
    """The job's panel of that pk, locked. Raises JobPanel.DoesNotExist."""
    return job.panels.select_for_update().get(pk=pk)


def try_lock_panel_to_deliver(*, job: Job, index: int) -> JobPanel | None:
    """The job's panel at `index`, locked (its hold and the hold's pending transfer
    fetched with it, not locked: a delivery captures the hold by its key); None if
    the job has none there."""
    return (
        job.panels.select_for_update(of=("self",))
        .select_related("hold__pending_transfer")
        .filter(index=index)
        .order_by("index")
        .first()
    )


def lock_panels(*, job: Job) -> list[JobPanel]:
    """Every panel of the job, locked in index order."""
    return list(job.panels.select_for_update().order_by("index"))


def lock_next_unapproved_panel(*, job: Job, after: int) -> JobPanel | None:
    """The job's first panel past index `after` that is not approved, locked (that one
    alone); None if every one past it is approved."""
    return (
        job.panels.select_for_update()
        .filter(index__gt=after)
        .exclude(state=PanelState.APPROVED)
        .order_by("index")
        .first()
    )


def lock_pending_panels(*, job: Job, after: int, through: int) -> list[JobPanel]:
    """The job's pending panels with an index past `after` up to `through`, locked in
    index order."""
    return list(
        job.panels.select_for_update()
        .filter(index__gt=after, index__lte=through, state=PanelState.PENDING)
        .order_by("index")
    )


def lock_panels_with_images_under(*, job: Job, prefix: str) -> list[JobPanel]:
    """The job's panels whose image is stored under `prefix`, locked in index order."""
    return list(job.panels.select_for_update().filter(image__startswith=prefix).order_by("index"))


def lock_open_holds(*, job: Job) -> None:
    """Locks every pending hold of the job's panels, by pk, before any account row.

    The ledger's lock order is hold → key → accounts by pk. Releasing several
    holds one after another would lock the account, then the next hold, while
    the ledger's sweep holds that hold and waits for the account: a deadlock.
    """
    hold_ids = list(job.panels.exclude(hold=None).values_list("hold_id", flat=True))
    list(
        Hold.objects.select_for_update(of=("self",))
        .filter(pk__in=hold_ids, state=Hold.State.PENDING)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
