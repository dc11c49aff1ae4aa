"""The sweeps that recover what a lost message or a lost worker leaves behind: jobs past
their deadline are expired; renders whose task was lost, or whose worker stopped
beating, are sent again under the same attempt and hold (charged once).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ledger.models import Hold

from . import dispatch, liveness
from .events import EventType, emit
from .lock_objects import lock_job, lock_panel_by_pk
from .models import LIVE_STATES, Job, JobPanel, JobState, PanelState
from .steps import due_at, end_job, past_deadline, send_panel_render


def expire_due_jobs(*, now: datetime | None = None) -> int:
    """Expires every live job past its deadline (confirm_by or the TTL); returns how many."""
    now = now or timezone.now()
    due = Job.objects.filter(state__in=LIVE_STATES).filter(due_at(now))
    return sum(_expire_if_due(job=job, now=now) for job in due.order_by("pk"))


def requeue_stuck_renders(*, now: datetime | None = None) -> int:
    """Enqueues again every render whose task seems lost; returns how many.

    A render started more than RENDER_STUCK_SECONDS ago whose worker no
    longer beats (it died with it), or queued that long ago and never started
    (its message was lost), is sent again under the same attempt and hold; one
    still beating is only slow (waiting for a container under load).
    Whichever copy finishes first
    is delivered; the other finds the panel moved on and is discarded, so the
    person is charged once. Without this a lost worker's render would wait for
    the broker's visibility timeout.
    """
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.RENDER_STUCK_SECONDS)
    stuck = JobPanel.objects.filter(
        job__state__in=LIVE_STATES, hold__state=Hold.State.PENDING
    ).filter(
        Q(state=PanelState.RENDERING, render_started_at__lte=cutoff)
        | Q(state=PanelState.PENDING, queued_at__lte=cutoff)
    )

    def still_stuck(panel: JobPanel) -> bool:
        since = (
            panel.render_started_at
            if panel.state == PanelState.RENDERING
            else panel.queued_at
            if panel.state == PanelState.PENDING
            else None
        )
        return (
            since is not None
            and since <= cutoff
            # Still beating: slow (waiting for a container under load), not lost.
            and not (panel.state == PanelState.RENDERING and _beats(panel))
        )

    candidates = stuck.order_by("pk").values_list("pk", "job_id", "attempts")
    return _requeue(list(candidates), now=now, why="stuck", still_lost=still_stuck)


def requeue_lost_renders(*, now: datetime | None = None) -> int:
    """Sends again every render whose worker stopped beating, and every render whose
    task a dead worker took before it started; returns how many.

    A render is RENDERING from the moment its task starts (waiting for a
    container included) and its worker beats every RENDER_HEARTBEAT_SECONDS.
    One started more than three beats ago with no live heartbeat lost its
    worker: it is requeued under the same attempt and hold (charged once).
    """
    now = now or timezone.now()
    grace = timedelta(seconds=settings.RENDER_HEARTBEAT_SECONDS * 3)
    count = _requeue_unstarted(now=now, cutoff=now - grace)
    candidates = list(
        JobPanel.objects.filter(
            job__state__in=LIVE_STATES,
            hold__state=Hold.State.PENDING,
            state=PanelState.RENDERING,
            render_started_at__lte=now - grace,
        ).values_list("pk", "job_id", "index", "attempts")
    )
    beating = liveness.alive_many([liveness.ticket(j, i, a) for _, j, i, a in candidates])
    silent = [(pk, j, a) for pk, j, i, a in candidates if not beating[liveness.ticket(j, i, a)]]
    return count + _requeue(
        silent,
        now=now,
        why="worker lost",
        still_lost=lambda panel: panel.state == PanelState.RENDERING and not _beats(panel),
    )


def _requeue_unstarted(*, now: datetime, cutoff: datetime) -> int:
    """Sends again the renders queued before `cutoff` that never started, when no queue
    holds a message: a worker took their task and died before starting it (its message
    would come back only after the broker's visibility timeout). While messages wait,
    they may be among them, and the stuck-render sweep is the backstop."""
    unstarted = list(
        JobPanel.objects.filter(
            job__state__in=LIVE_STATES,
            hold__state=Hold.State.PENDING,
            state=PanelState.PENDING,
            queued_at__lte=cutoff,
        ).values_list("pk", "job_id", "attempts")
    )
    if not unstarted or any(dispatch.waiting().values()):
        return 0
    return _requeue(
        unstarted,
        now=now,
        why="never started",
        still_lost=lambda panel: (
            panel.state == PanelState.PENDING
            and panel.queued_at is not None
            and panel.queued_at <= cutoff
        ),
    )


def _requeue(
    candidates: list[tuple[int, int, int]],
    *,
    now: datetime,
    why: str,
    still_lost: Callable[[JobPanel], bool],
) -> int:
    """The sweeps' one loop: for each (panel pk, job id, attempt) a query took for lost,
    locks the job and its panel and sends the attempt again if the locked rows say so
    (the job live, the panel still on this attempt, and `still_lost`); returns how many.
    Each candidate in its own transaction, job row first."""
    count = 0
    for pk, job_id, attempts in candidates:
        with transaction.atomic():
            job = lock_job(pk=job_id)
            panel = lock_panel_by_pk(job=job, pk=pk)
            if not job.live or panel.attempts != attempts or not still_lost(panel):
                continue
            _send_again(job, panel, now=now, why=why)
            count += 1
    return count


def _beats(panel: JobPanel) -> bool:
    """Whether the worker rendering the panel's current attempt still beats."""
    return liveness.alive(liveness.ticket(panel.job_id, panel.index, panel.attempts))


def _send_again(job: Job, panel: JobPanel, *, now: datetime, why: str) -> None:
    """Sends the panel's current attempt again (same hold: charged once). The caller holds
    the job's and the panel's row locks and has checked the render is lost."""
    panel.state = PanelState.PENDING
    panel.queued_at = now
    panel.save(update_fields=["state", "queued_at"])
    emit(
        job=job,
        type=EventType.PANEL_REQUEUED,
        data={"index": panel.index, "attempt": panel.attempts, "why": why},
    )
    send_panel_render(job=job, panel=panel)


def expire_job_if_due(*, job_id: int, now: datetime | None = None) -> bool:
    """The deadline task: expires the job if it is live and past its deadline."""
    now = now or timezone.now()
    job = Job.objects.filter(pk=job_id, state__in=LIVE_STATES).first()
    return job is not None and _expire_if_due(job=job, now=now)


def _expire_if_due(*, job: Job, now: datetime) -> bool:
    """Expires the job if its locked row says it is live and past its deadline (the
    deadline task's and the sweep's one rule); returns whether this call ended it."""
    return end_job(
        job=job,
        state=JobState.EXPIRED,
        reason="Past its deadline.",
        now=now,
        only_if=lambda locked: past_deadline(locked, now),
    )[1]
