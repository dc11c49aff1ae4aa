"""The render job's shared steps: what the person's decisions (decisions.py), the worker
(rendering.py, attempts.py) and the sweeps (recovery.py) all do to a job.

Charging rule (mangagen/kernel/paid_render.py, a sheet's too): one hold per render, of
its kind's price (kinds/); capture when the image is delivered to a confirmed job;
release on every other path (cancel, expiry, failure, invalidation). A person pays for
each render they are shown, redos included, and nothing else.

Lock order (storyboards/lock_objects.py; this package's rows are locked through
jobs/lock_objects.py): a path that creates, confirms,
replaces or ends a job takes its comic's row first (`lock_storyboard`, FOR NO
KEY UPDATE); then the job row, then its panel rows, then (when a transaction
resolves more than one) the panels' pending holds by pk, then the ledger's
own locks (hold → key → accounts by pk). The worker's and the sweeps' paths,
which neither create nor end a job, start at the job row. Every conditional end re-checks its
condition on the locked job row (`end_job(only_if=…)`). A job's state changes
through `change_job` (save, then `job.state`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ledger import errors as ledger_errors
from ledger.models import Hold
from mangagen.kernel import paid_render
from mangagen.kernel.queues import Queue
from mangagen.render_kinds.kind import RenderKind
from mangagen.renderers.gpu_pool import GpuPool, Priority
from mangagen.storyboards.lock_objects import try_lock_storyboard
from mangagen.storyboards.services import keep_render

from . import dispatch, liveness
from .events import EventType, emit
from .lock_objects import (
    lock_job,
    lock_open_holds,
    lock_panels,
    lock_pending_panels,
    try_lock_job,
    try_lock_panel,
)
from .models import Job, JobPanel, JobState, PanelState, RenderAttempt
from .selectors import credits_of, image_url, reader_url, state_data
from .signals import job_ended


def deadline_of(job: Job) -> datetime | None:
    """A job's deadline: `confirm_by` until it is confirmed, then `expires_at`."""
    return job.expires_at if job.confirmed else job.confirm_by


def past_deadline(job: Job, now: datetime) -> bool:
    """The one deadline rule: due at its deadline (`deadline_of`), inclusive.

    confirm_job, the deadline task and the sweep all ask this, of the locked row;
    `due_at` is the same rule as a query, for the sweep to find the candidates.
    """
    deadline = deadline_of(job)
    return deadline is not None and deadline <= now


def due_at(now: datetime) -> Q:
    """`past_deadline` as a filter on jobs: the rows whose deadline is at or before `now`."""
    return Q(confirmed=True, expires_at__lte=now) | Q(confirmed=False, confirm_by__lte=now)


def end_job(
    *,
    job: Job,
    state: str,
    reason: str,
    now: datetime | None = None,
    only_if: Callable[[Job], bool] | None = None,
) -> tuple[Job, bool]:
    """Ends a live job; `only_if` is the caller's condition, asked of the locked row.

    Returns the job and whether this call ended it.
    """
    with transaction.atomic():
        if try_lock_storyboard(pk=job.storyboard_id) is None:
            return job, False  # its comic was deleted, jobs and all
        job = lock_job(pk=job.pk)
        if not job.live or (only_if is not None and not only_if(job)):
            return job, False
        panels = lock_panels(job=job)
        lock_open_holds(job=job)
        for panel in panels:
            if panel.state in (PanelState.PENDING, PanelState.RENDERING) and panel.attempts:
                _withdraw(job=job, panel=panel)
            paid_render.release(panel.hold, reason=f"job {state}: {reason}")
        change_job(job, state=state, finished_at=now or timezone.now(), end_reason=reason)
        emit(job=job, type=EventType.CREDITS, data=credits_of(user_id=job.owner_id))
        job_ended.send(sender=Job, job=job, state=state, reason=reason)
    return job, True


def change_job(job: Job, **changes) -> None:
    """The one way a job changes state: set the fields, save them, and tell its clients
    (`job.state`, in the same transaction). The caller holds the job's row lock."""
    for name, value in changes.items():
        setattr(job, name, value)
    job.save(update_fields=list(changes))
    emit(job=job, type=EventType.JOB_STATE, data=state_data(job))


def lock_attempt(job_id: int, index: int, attempt: int) -> tuple[Job | None, JobPanel | None]:
    """Locks a live job and its panel if `attempt` is still the panel's current render.

    (None, None) otherwise: a redelivered or superseded task then does nothing.
    """
    job = try_lock_job(pk=job_id)
    if job is None or not job.live:
        return None, None
    panel = try_lock_panel(job=job, index=index)
    return job, (panel if panel is not None and waits_for(job, panel, attempt) else None)


def waits_for(job: Job, panel: JobPanel, attempt: int) -> bool:
    """Whether the live job's panel still waits for this attempt's render: queued
    (perhaps sent again by a sweep) or rendering, under the attempt's own hold."""
    return (
        job.live
        and panel.attempts == attempt
        and panel.state in (PanelState.PENDING, PanelState.RENDERING)
        and panel.hold_id is not None  # None: reset by a rebase, the hold was released
    )


def queue_lookahead_renders(*, job: Job) -> int:
    """While the person decides on panel i, panels i+1…i+k render ahead under their own holds.

    They go to the capped `speculative` queue and are delivered (paid) only
    when reached; a person who cannot pay for them, or whose account was
    frozen meanwhile, simply gets none (the delivery they ride on stands).
    Returns how many renders it placed.
    """
    from .kinds.panel import PANEL  # a kind's worker side imports these steps

    placed = 0
    ahead = lock_pending_panels(
        job=job,
        after=job.current_index,
        through=job.current_index + settings.SPECULATION_LOOKAHEAD,
    )
    for panel in ahead:
        if has_open_hold(panel):
            continue
        try:
            with transaction.atomic():
                queue_render(job=job, panel=panel, kind=PANEL, lookahead=True)
        except (ledger_errors.InsufficientCredits, ledger_errors.AccountFlagged):
            break
        placed += 1
    return placed


def queue_render(*, job: Job, panel: JobPanel, kind: RenderKind, lookahead: bool = False) -> None:
    """Places the render's hold, of `kind`'s price (the key names job, panel and
    attempt), and enqueues it on commit."""
    panel.attempts += 1
    hold = kind.place_hold(
        owner=job.owner,
        key=f"job:{job.pk}:panel:{panel.index}:attempt:{panel.attempts}",
        reference=f"job {job.pk} panel {panel.index}",
        expires_in=settings.JOB_TTL_SECONDS + 600,
    )
    # The attempt's own record of its hold: what the speculation metrics count.
    RenderAttempt.objects.create(job=job, index=panel.index, attempt=panel.attempts, hold=hold)
    panel.hold = hold
    panel.state = PanelState.PENDING
    panel.error = ""
    panel.queued_at = timezone.now()
    panel.lookahead = lookahead
    panel.save(update_fields=["attempts", "hold", "state", "error", "queued_at", "lookahead"])
    if panel.index == job.current_index and job.state != JobState.QUEUED:
        change_job(job, state=JobState.QUEUED)
    emit(
        job=job, type=EventType.PANEL_QUEUED, data={"index": panel.index, "attempt": panel.attempts}
    )
    emit(job=job, type=EventType.CREDITS, data=credits_of(user_id=job.owner_id))
    send_panel_render(job=job, panel=panel)


def promote_panel(*, job: Job, panel: JobPanel) -> None:
    """A speculative render the person now waits for becomes confirmed work at once.

    Waiting for a container, its ticket moves to the pool's confirmed queue
    (keeping its place). Not yet started, a copy is also sent to `render`:
    same attempt, same hold; the first copy to start renders, and the other
    finds it alive ("duplicate") or moved on. Confirmed work never waits
    behind speculation, and is charged once.
    """
    name = liveness.ticket(job.pk, panel.index, panel.attempts)
    if panel.lookahead:
        panel.lookahead = False  # from now on it is what the person waits for
        panel.save(update_fields=["lookahead"])
    transaction.on_commit(lambda: GpuPool().promote(name), robust=True)
    if panel.state == PanelState.PENDING:
        send_panel_render(job=job, panel=panel)  # now confirmed work: the `render` queue


def _withdraw(*, job: Job, panel: JobPanel) -> None:
    """A render of an ended job that still waits for a container, or for its boot, stops."""
    name = liveness.ticket(job.pk, panel.index, panel.attempts)
    transaction.on_commit(lambda: GpuPool().withdraw(name), robust=True)


def render_priority(job: Job, panel: JobPanel) -> Priority:
    """Confirmed work is what a person is waiting for; the rest is speculation."""
    if job.confirmed and not panel.lookahead and panel.index == job.current_index:
        return Priority.CONFIRMED
    return Priority.SPECULATIVE


def queue_for(job: Job, panel: JobPanel) -> Queue:
    """The one queue rule: the render a person waits for (`render_priority`: confirmed job,
    its current panel, not look-ahead) goes to `render`; every other render (an
    unconfirmed job's, the look-ahead) to the capped `speculative` queue."""
    return Queue.RENDER if render_priority(job, panel) == Priority.CONFIRMED else Queue.SPECULATIVE


def send_panel_render(*, job: Job, panel: JobPanel) -> None:
    """Enqueues the panel's current attempt on commit, on the queue `queue_for` picks:
    every render is sent this way (placed, promoted, or sent again by a sweep)."""
    dispatch.render_on_commit(
        job_id=job.pk, index=panel.index, attempt=panel.attempts, queue=queue_for(job, panel)
    )


def deliver_panel(*, job: Job, panel: JobPanel, lookahead_now: bool = True) -> None:
    """Shows a ready panel to its confirmed job's owner; this is when the render is paid.

    Then the next panels render ahead: placed here, or (`lookahead_now=False`)
    by a worker once this transaction commits."""
    hold = panel.hold
    assert hold is not None, "a ready panel's render was paid with a hold"
    refused = paid_render.capture(hold=hold, reason="delivered")
    if refused:
        panel.state = PanelState.FAILED
        panel.error = refused
        panel.save(update_fields=["state", "error"])
        emit(
            job=job, type=EventType.PANEL_FAILED, data={"index": panel.index, "error": panel.error}
        )
    else:
        panel.state = PanelState.DELIVERED
        panel.delivered_at = timezone.now()
        panel.save(update_fields=["state", "delivered_at"])
        _keep(job=job, panel=panel)
        emit(
            job=job,
            type=EventType.PANEL_DELIVERED,
            data={
                "index": panel.index,
                "attempt": panel.attempts,
                "image_url": image_url(panel, job),
            },
        )
        emit(job=job, type=EventType.CREDITS, data=credits_of(user_id=job.owner_id))
    if job.state != JobState.AWAITING_DECISION:  # (an attached job may be already)
        change_job(job, state=JobState.AWAITING_DECISION)
    if panel.state == PanelState.DELIVERED and settings.SPECULATION_LOOKAHEAD:
        if lookahead_now:
            queue_lookahead_renders(job=job)
        else:
            dispatch.lookahead_on_commit(job_id=job.pk)


def _keep(*, job: Job, panel: JobPanel) -> None:
    """A paid render belongs to the comic from now on, whatever becomes of this job."""
    with panel.image.open("rb") as handle:
        image = handle.read()
    keep_render(
        storyboard_id=job.storyboard_id,
        art_hash=panel.art_hash,
        image=image,
        faces=panel.faces,
        source=panel,
        attempt=panel.attempts,
        aspect=panel.aspect,
    )


def complete_job(job: Job) -> None:
    change_job(job, state=JobState.COMPLETED, finished_at=timezone.now())
    emit(job=job, type=EventType.JOB_DONE, data={"reader_url": reader_url(job)})
    job_ended.send(sender=Job, job=job, state=job.state, reason="completed")


def has_open_hold(panel: JobPanel) -> bool:
    return (
        panel.hold_id is not None
        and panel.hold is not None
        and panel.hold.state == Hold.State.PENDING
    )


def schedule_deadline(job: Job) -> None:
    """A task at the deadline, when it is near; the periodic sweep is the backstop.

    Far deadlines (the 2 h TTL) are left to the sweep alone: Redis redelivers
    any task unacknowledged past the visibility timeout, ETA tasks included.
    """
    deadline = deadline_of(job)
    horizon = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] / 2
    if deadline is not None and (deadline - timezone.now()).total_seconds() < horizon:
        dispatch.expire_on_commit(job_id=job.pk, eta=deadline)
