"""The render job state machine. Every transition: keyword-only, atomic, row-locked.

Charging rule: one hold per render; capture when the image is delivered to a
confirmed job; release on every other path (cancel, expiry, failure,
invalidation). A person pays for each render they are shown, redos
included, and nothing else.

Lock order (storyboards/lock_objects.py): a path that creates, confirms,
replaces or ends a job takes its comic's row first (`lock_storyboard`, FOR NO
KEY UPDATE); then the job row, then its panel rows, then (when a transaction
resolves more than one) the panels' pending holds by pk, then the ledger's
own locks (hold → key → accounts by pk). The worker's and the sweeps' paths,
which neither create nor end a job, start at the job row. Every conditional end re-checks its
condition on the locked job row (`_end(only_if=…)`). A job's state changes
through `_change` (save, then `job.state`).

Reads live in selectors.py, the renderer's spec in specs.py, and enqueueing
in dispatch.py (tasks by name, on commit): tasks.py imports this module,
never the other way round.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import IntegrityError, close_old_connections, connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext, gettext_lazy

from ledger import errors as ledger_errors
from ledger import services as ledger
from ledger.models import Hold
from mangagen import quotas
from mangagen.credit_history import RENDER_FAILED_PREFIX
from mangagen.observability import metrics
from mangagen.observability.metrics import RenderOutcome
from mangagen.queues import Queue
from mangagen.renderers import RenderError, get_renderer, observed
from mangagen.renderers.base import StateChange
from mangagen.renderers.warmth import GpuPool, Priority, Withdrawn
from mangagen.storyboards.lock_objects import lock_storyboard, try_lock_storyboard
from mangagen.storyboards.models import Storyboard, panels_complete
from mangagen.storyboards.selectors import current_takes
from mangagen.storyboards.services import keep_render

from . import dispatch, liveness
from .errors import IllegalTransition, JobError, NothingToRender, StoryboardIncomplete
from .events import EventType, emit
from .models import (
    LIVE_STATES,
    GenerateOutcome,
    Job,
    JobPanel,
    JobState,
    PanelState,
    RenderAttempt,
)
from .selectors import credits_of, image_url, reader_url, state_data
from .signals import generate_requested, job_confirmed, job_ended
from .specs import panel_spec, spec_of

logger = logging.getLogger(__name__)


# --- starting, confirming, generating ---------------------------------------------------------


def generate(*, user, storyboard: Storyboard) -> tuple[Job, GenerateOutcome]:
    """What Generate does (see _generate); tells listeners Generate was clicked."""
    job, how = _generate(user=user, storyboard=storyboard)
    generate_requested.send(sender=Job, user=user, storyboard=storyboard, job=job, how=how)
    return job, how


def _generate(*, user, storyboard: Storyboard) -> tuple[Job, GenerateOutcome]:
    """What Generate does. Returns the job and how (created, attached or existing).

    A live unconfirmed job of this storyboard is confirmed (attached); a live
    confirmed job of this version is returned as it is; otherwise a new job
    starts. Raises StoryboardIncomplete or InsufficientCredits (nothing made).
    """
    for _ in range(3):
        live = Job.objects.filter(storyboard=storyboard, state__in=LIVE_STATES).first()
        if live is not None:
            if not live.confirmed:
                # Read without a lock: the job may end (a beacon, its deadline) before
                # confirm_job locks it. Only a job confirmed and live is attached.
                job = confirm_job(job=live)
                if job.confirmed and job.live:
                    return job, GenerateOutcome.ATTACHED
                continue
            storyboard.refresh_from_db()
            if live.version == storyboard.version:
                return live, GenerateOutcome.EXISTING
            cancel_job(job=live, reason="The storyboard changed; a new job replaced this one.")
        quotas.check_live_jobs(user=user, storyboard=storyboard)
        try:
            return start_job(user=user, storyboard=storyboard), GenerateOutcome.CREATED
        except IntegrityError:
            continue  # a twin request started one first: return that one
    raise JobError(gettext("Could not start a job; please try again."))


def start_job(
    *,
    user,
    storyboard: Storyboard,
    confirmed: bool = True,
    confirm_by: datetime | None = None,
) -> Job:
    """A job for the storyboard's current version, with panel one's hold placed.

    Raises StoryboardIncomplete, or InsufficientCredits when the person cannot
    pay for one render; either way nothing is created.
    """
    with transaction.atomic():
        storyboard = lock_storyboard(pk=storyboard.pk)
        panels = list(storyboard.panels.all())
        if not panels_complete(panels):
            raise StoryboardIncomplete(gettext("Every panel needs a description before rendering."))
        now = timezone.now()
        takes = current_takes(storyboard=storyboard)
        if not confirmed and all(p.art_hash in takes for p in panels):
            raise NothingToRender(gettext("Every panel is already drawn and kept."))
        job = Job.objects.create(
            owner=user,
            storyboard=storyboard,
            version=storyboard.version,
            style=storyboard.style,
            cast={c.name: c.description for c in storyboard.characters.all()},
            confirmed=confirmed,
            confirmed_at=now if confirmed else None,
            confirm_by=None if confirmed else confirm_by,
            expires_at=now + timedelta(seconds=settings.JOB_TTL_SECONDS) if confirmed else None,
        )
        JobPanel.objects.bulk_create(_job_panel(job, p, takes) for p in panels)
        job = Job.objects.select_for_update().get(pk=job.pk)
        missing = job.panels.exclude(state=PanelState.APPROVED).order_by("index").first()
        if missing is None:  # every panel is kept: nothing to render, nothing to pay
            _complete(job)
            return job
        _change(job, current_index=missing.index)
        _queue_render(job=job, panel=missing)
        _schedule_deadline(job)
    return job


def _job_panel(job: Job, panel, takes: dict) -> JobPanel:
    """A panel whose art hash has kept art joins the job approved, with that art: free."""
    kept = takes.get(panel.art_hash)
    return JobPanel(
        job=job,
        index=panel.index,
        content_hash=panel.content_hash,
        art_hash=panel.art_hash,
        spec=spec_of(panel),
        state=PanelState.APPROVED if kept else PanelState.PENDING,
        image=kept.image.name if kept else "",
        faces=kept.faces if kept else {},
    )


def confirm_job(*, job: Job) -> Job:
    """Confirms an unconfirmed job (Generate attaching to a speculation).

    If the storyboard changed meanwhile, renders whose index and art hash
    still match are kept (a text edit keeps them: lettering is drawn over the
    art) and the rest start again; a render whose picture's inputs differ is
    never shown. Idempotent. A job at or past its `confirm_by` is not
    confirmed: it expires here (the same rule as the sweep's, `past_deadline`)
    and is returned ended.
    """
    with transaction.atomic():
        storyboard = lock_storyboard(pk=job.storyboard_id)
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.confirmed or not job.live:
            return job
        # At or past confirm_by the job is due (the rule the deadline task and the
        # sweep use): it expires now rather than being confirmed.
        if past_deadline(job, timezone.now()):
            return _end(job=job, state=JobState.EXPIRED, reason="Past its deadline.")[0]
        _lock_open_holds(job)
        if storyboard.version != job.version:
            _rebase(job=job, storyboard=storyboard)
        now = timezone.now()
        _change(
            job,
            confirmed=True,
            confirmed_at=now,
            expires_at=now + timedelta(seconds=settings.JOB_TTL_SECONDS),
            # as _rebase left them
            version=job.version,
            style=job.style,
            cast=job.cast,
            current_index=job.current_index,
        )
        job_confirmed.send(sender=Job, job=job)
        current = (
            job.panels.select_for_update(of=("self",))
            .select_related("hold__pending_transfer")  # _deliver captures it by its key
            .filter(index=job.current_index)
            .first()
        )
        if current is None or current.state == PanelState.APPROVED:
            # Edited back to kept art, or the panel it was drawing removed and
            # every one left kept: nothing to draw.
            return _end(job=job, state=JobState.CANCELLED, reason="Every panel is kept.")[0]
        if current.state == PanelState.READY:
            # The person waits for this request: the look-ahead (more holds,
            # events and renders) is placed by a worker right after it.
            _deliver(job=job, panel=current, lookahead_now=False)
        elif current.state == PanelState.PENDING and not _has_open_hold(current):
            _queue_render(job=job, panel=current)
        elif current.state in (PanelState.PENDING, PanelState.RENDERING):
            _promote(job=job, panel=current)
        _schedule_deadline(job)
    return job


def _rebase(*, job: Job, storyboard: Storyboard) -> None:
    fresh = {p.index: p for p in storyboard.panels.all()}
    takes = current_takes(storyboard=storyboard)
    for panel in job.panels.select_for_update():
        new = fresh.get(panel.index)
        if new is not None and new.art_hash == panel.art_hash:
            panel.content_hash, panel.spec = new.content_hash, spec_of(new)
            panel.save(update_fields=["content_hash", "spec"])
            continue
        _release_open_hold(panel, reason="The storyboard changed before this render was shown.")
        if new is None:
            panel.delete()
            continue
        kept = _job_panel(job, new, takes)
        panel.content_hash, panel.art_hash, panel.spec = new.content_hash, new.art_hash, kept.spec
        panel.state, panel.image, panel.faces = kept.state, kept.image, kept.faces
        panel.error, panel.hold = "", None
        panel.save()
    existing = set(job.panels.values_list("index", flat=True))
    JobPanel.objects.bulk_create(
        _job_panel(job, p, takes) for i, p in fresh.items() if i not in existing
    )
    current = job.panels.exclude(state=PanelState.APPROVED).order_by("index").first()
    if current is not None:
        job.current_index = current.index
    job.version = storyboard.version
    job.style = storyboard.style  # what the panels still to draw are drawn in
    job.cast = {c.name: c.description for c in storyboard.characters.all()}
    emit(job=job, type=EventType.JOB_REBASED, data={"version": job.version, "total": len(fresh)})


# --- rendering -----------------------------------------------------------------------------


def perform_render(*, job_id: int, index: int, attempt: int) -> RenderOutcome:
    """Renders one attempt of one panel. Safe to run twice (a redelivered task).

    Returns what happened: a RenderOutcome — "delivered", "ready", "withdrawn" (its
    job ended while it waited for a container, or for a provider that could not stop
    it), "cancelled_at_provider" (its job ended and the render was stopped at the
    provider) or "discarded" (it rendered for a job that had moved on) — or "stale" (the
    panel had moved on before it ran) or "duplicate" (another copy of this attempt is
    alive). Raises RenderError for the task to retry or fail. How the attempt ended, and
    its phases, are kept on its RenderAttempt; the render task counts the answer in
    `mangagen_renders_total{outcome}` and the phases in `mangagen_render_seconds`.

    While it waits for a container and renders, it beats (liveness) and holds
    no database connection; confirmed work waits in the pool's confirmed queue.
    """
    renderer = get_renderer()
    name = liveness.ticket(job_id, index, attempt)
    heartbeat = liveness.Heartbeat(name)
    with transaction.atomic():
        job, panel = _lock_attempt(job_id, index, attempt)
        if job is None or panel is None:
            return RenderOutcome.STALE
        twin = panel.state == PanelState.RENDERING and liveness.alive(name)
    # Another copy of this attempt beats (a promotion's twin, or the copy a worker was
    # killed under, whose last beat has not expired yet): let it finish, or take over
    # once it falls silent.
    if twin and not _outlive_twin(job_id=job_id, index=index, attempt=attempt, name=name):
        return RenderOutcome.DUPLICATE
    with transaction.atomic():
        job, panel = _lock_attempt(job_id, index, attempt)
        if job is None or panel is None:
            return RenderOutcome.STALE
        if panel.state == PanelState.RENDERING and liveness.alive(name):
            return RenderOutcome.DUPLICATE
        priority = _priority(job, panel)
        # Alive from the moment the panel says RENDERING (the sweep's clock starts there),
        # not from when this worker, slowed down on a loaded machine, gets to its wait.
        heartbeat.beat()
        panel.state = PanelState.RENDERING
        panel.render_started_at = timezone.now()
        panel.save(update_fields=["state", "render_started_at"])
        if index == job.current_index and job.state != JobState.RENDERING:
            _change(job, state=JobState.RENDERING)
        wait = getattr(renderer, "expected_wait", lambda: None)()
        emit(
            job=job,
            type=EventType.PANEL_RENDERING,
            data={"index": index, "attempt": attempt, "warming": bool(wait), "warm_in": wait},
        )
        spec = panel_spec(job, panel)
    _hold_no_connection()  # the wait for a container or a provider can be long

    def on_state(change: StateChange) -> None:
        note_provider_state(job_id=job_id, index=index, attempt=attempt, change=change)

    with heartbeat:
        try:
            result = renderer.render(
                spec,
                spec.default_seed() + attempt - 1,
                ticket=name,
                priority=priority,
                on_state=on_state,
            )
        except Withdrawn as withdrawn:
            return _withdrawn(job_id=job_id, index=index, attempt=attempt, withdrawn=withdrawn)
    observed.record(result)
    phases = metrics.phases_of(result.metadata, result.seconds)
    metrics.observe_render_phases(result.metadata, result.seconds)
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        panel = job.panels.select_for_update().filter(index=index).first()
        if panel is None or not _waits_for(job, panel, attempt):
            # Cancelled, expired or replaced while rendering: GPU time spent for nothing,
            # logged so what speculation wastes can be counted. (Sent again by the sweep
            # while it still ran, the panel still waits for this attempt: it is delivered.)
            emit(
                job=job,
                type=EventType.PANEL_DISCARDED,
                data={"index": index, "attempt": attempt, "seconds": round(result.seconds, 2)},
            )
            _ended(job_id, index, attempt, outcome=RenderOutcome.DISCARDED, phases=phases)
            return RenderOutcome.DISCARDED
        panel.image.save("panel.png", ContentFile(result.image), save=False)
        panel.state = PanelState.READY
        panel.rendered_at = timezone.now()
        panel.cold = result.cold
        panel.faces = result.metadata.get("faces") or {}
        panel.render_seconds = result.seconds
        panel.save()
        ready_pk = panel.pk
        transaction.on_commit(lambda: _draw_lettering_ahead(ready_pk))
        emit(
            job=job,
            type=EventType.PANEL_READY,
            data={
                "index": index,
                "attempt": attempt,
                "cold": result.cold,
                "seconds": round(result.seconds, 2),
            },
        )
        if job.confirmed and index == job.current_index:
            _deliver(job=job, panel=panel)
            _ended(job_id, index, attempt, outcome=RenderOutcome.DELIVERED, phases=phases)
            return RenderOutcome.DELIVERED
        if index == job.current_index and job.state != JobState.AWAITING_DECISION:
            _change(job, state=JobState.AWAITING_DECISION)
        _ended(job_id, index, attempt, outcome=RenderOutcome.READY, phases=phases)
        return RenderOutcome.READY


def note_provider_state(*, job_id: int, index: int, attempt: int, change: StateChange) -> None:
    """Tells the job's page where its render stands at a remote provider (queued there,
    booting, drawing, the provider not answering: `panel.provider`), while it still is
    the render the panel waits for."""
    with transaction.atomic():
        job, panel = _lock_attempt(job_id, index, attempt)
        if job is not None and panel is not None and panel.state == PanelState.RENDERING:
            data = {"index": index, "attempt": attempt, "state": str(change.state)}
            emit(
                job=job,
                type=EventType.PANEL_PROVIDER,
                data=data | {"detail": change.detail, "retry_in": change.retry_in},
            )
    _hold_no_connection()  # the render goes on waiting


def _withdrawn(*, job_id: int, index: int, attempt: int, withdrawn: Withdrawn) -> RenderOutcome:
    """A render whose job ended while it waited: recorded with what cancelling it at the
    provider saved, if it was cancelled there."""
    if withdrawn.cancelled_at_provider:
        outcome, saved = (
            RenderOutcome.CANCELLED_AT_PROVIDER,
            observed.saved_seconds(
                observed.current(), state=withdrawn.state, phases=withdrawn.phases
            ),
        )
    else:
        outcome, saved = RenderOutcome.WITHDRAWN, None
    _ended(job_id, index, attempt, outcome=outcome, phases=withdrawn.phases, saved=saved)
    return outcome


def _ended(
    job_id: int,
    index: int,
    attempt: int,
    *,
    outcome: RenderOutcome,
    phases: dict,
    saved: float | None = None,
) -> None:
    """Records how a render attempt ended (its own row: nothing else reads or locks it)."""
    RenderAttempt.objects.filter(job_id=job_id, index=index, attempt=attempt).update(
        outcome=outcome, phases=phases, provider_seconds_saved=saved
    )


def _hold_no_connection() -> None:
    """A render thread gives its database connection back before it waits (outside a
    transaction: tests run the worker's code inside theirs)."""
    if not connection.in_atomic_block:
        close_old_connections()


def _draw_lettering_ahead(panel_pk: int) -> None:
    """After a render commits, its worker draws the lettered picture the person will
    be shown, so that showing it costs a cache read. Best effort: the image view
    draws it itself on a miss."""
    from .images import draw_ahead  # the image view imports the page composer

    try:
        panel = JobPanel.objects.select_related("job__storyboard").get(pk=panel_pk)
        draw_ahead(panel)
    except Exception:
        logger.warning("Could not draw panel %s's lettering ahead", panel_pk, exc_info=True)


def _outlive_twin(*, job_id: int, index: int, attempt: int, name: str) -> bool:
    """Waits while a twin of this attempt beats: True once it is silent and the panel
    still waits for this attempt (take over), False if the panel moved on or the twin
    still beats after a heartbeat's lifetime (it is alive: leave it the render)."""
    for _ in range(int(settings.RENDER_HEARTBEAT_SECONDS * 3 / 0.25) + 8):
        time.sleep(0.25)
        waiting = JobPanel.objects.filter(
            job_id=job_id, index=index, attempts=attempt, state=PanelState.RENDERING
        ).exists()
        if not waiting:
            return False
        if not liveness.alive(name):
            return True
    return False


def note_render_retry(
    *, job_id: int, index: int, attempt: int, error: str, retry_in: float
) -> None:
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(pk=job_id).first()
        if job is None or not job.live:
            return
        emit(
            job=job,
            type=EventType.PANEL_RETRYING,
            data={"index": index, "attempt": attempt, "error": error, "retry_in": retry_in},
        )


def fail_render(*, job_id: int, index: int, attempt: int, error: str, detail: str = "") -> None:
    """A render failed for good: release its hold, mark the panel, let the person retry.

    `error` is what the person is told; `detail` (the provider's own words) goes in the
    log and the hold's release, which operators read (the person's history shows
    "The render failed; nothing was charged")."""
    with transaction.atomic():
        job, panel = _lock_attempt(job_id, index, attempt)
        if job is None or panel is None:
            return
        logger.warning("Render %s failed: %s", liveness.ticket(job_id, index, attempt), detail)
        _ended(job_id, index, attempt, outcome=RenderOutcome.FAILED, phases={})
        _release_open_hold(panel, reason=f"{RENDER_FAILED_PREFIX} {detail or error}"[:200])
        panel.state = PanelState.FAILED
        panel.error = error[:500]
        panel.save(update_fields=["state", "error", "hold"])
        emit(
            job=job,
            type=EventType.PANEL_FAILED,
            data={"index": index, "attempt": attempt, "error": panel.error},
        )
        emit(job=job, type=EventType.CREDITS, data=credits_of(user_id=job.owner_id))
        if index == job.current_index:
            _change(job, state=JobState.AWAITING_DECISION)


# --- the person's decisions -----------------------------------------------------------------------


def approve_panel(*, job: Job, index: int) -> Job:
    """Approves the panel awaiting a decision and starts the next one.

    Raises IllegalTransition, or InsufficientCredits when the next render
    cannot be paid for (then nothing changes).
    """
    with transaction.atomic():
        lock_storyboard(pk=job.storyboard_id)  # the last approval ends the job
        job = Job.objects.select_for_update().get(pk=job.pk)
        panel = _decision_panel(job, index, allowed=(PanelState.DELIVERED,), verb="approve")
        panel.state = PanelState.APPROVED
        panel.save(update_fields=["state"])
        emit(job=job, type=EventType.PANEL_APPROVED, data={"index": index})
        following = (
            job.panels.select_for_update()
            .filter(index__gt=index)
            .exclude(state=PanelState.APPROVED)  # kept art needs no render
            .order_by("index")
            .first()
        )
        if following is None:
            _complete(job)
            return job
        job.current_index = following.index
        job.save(update_fields=["current_index"])
        if following.state == PanelState.READY:
            _deliver(job=job, panel=following)
        elif following.state in (PanelState.PENDING, PanelState.FAILED) and not _has_open_hold(
            following
        ):
            _queue_render(job=job, panel=following)
        else:  # already rendering (look-ahead): it is delivered when it lands
            _promote(job=job, panel=following)
            _change(job, state=JobState.RENDERING)
    return job


def redo_panel(*, job: Job, index: int) -> Job:
    """Renders the panel awaiting a decision again, under a new hold.

    Raises IllegalTransition or InsufficientCredits (then nothing changes).
    """
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        panel = _decision_panel(
            job, index, allowed=(PanelState.DELIVERED, PanelState.FAILED), verb="redo"
        )
        _queue_render(job=job, panel=panel)
    return job


def cancel_job(*, job: Job, reason: str = "Cancelled.", only_if_unconfirmed: bool = False) -> Job:
    """Ends a live job and releases every open hold at once. Idempotent.

    With `only_if_unconfirmed` (a Review tab's beacon, a newer speculation) a
    job confirmed by then, as its locked row says, is left as it is.
    """
    only_if = (lambda locked: not locked.confirmed) if only_if_unconfirmed else None
    return _end(job=job, state=JobState.CANCELLED, reason=reason, only_if=only_if)[0]


def past_deadline(job: Job, now: datetime) -> bool:
    """The one deadline rule: due at `confirm_by` (unconfirmed) or `expires_at`, inclusive.

    confirm_job, the deadline task and the sweep all ask this, of the locked row.
    """
    deadline = job.expires_at if job.confirmed else job.confirm_by
    return deadline is not None and deadline <= now


def expire_due_jobs(*, now: datetime | None = None) -> int:
    """Expires every live job past its deadline (confirm_by or the TTL); returns how many."""
    now = now or timezone.now()
    due = Job.objects.filter(state__in=LIVE_STATES).filter(
        Q(confirmed=True, expires_at__lte=now) | Q(confirmed=False, confirm_by__lte=now)
    )
    return sum(
        _end(
            job=job,
            state=JobState.EXPIRED,
            reason="Past its deadline.",
            now=now,
            only_if=lambda locked: past_deadline(locked, now),
        )[1]
        for job in due.order_by("pk")
    )


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
    count = 0
    for candidate in stuck.order_by("pk"):
        with transaction.atomic():
            job = Job.objects.select_for_update().get(pk=candidate.job_id)
            panel = job.panels.select_for_update().get(pk=candidate.pk)
            # Still stuck, as the locked rows say: the same attempt, not moved on.
            since = panel.render_started_at if panel.state == PanelState.RENDERING else None
            since = since or (panel.queued_at if panel.state == PanelState.PENDING else None)
            if (
                not job.live
                or panel.attempts != candidate.attempts
                or since is None
                or since > cutoff
                # Still beating: slow (waiting for a container under load), not lost.
                or (
                    panel.state == PanelState.RENDERING
                    and liveness.alive(liveness.ticket(job.pk, panel.index, panel.attempts))
                )
            ):
                continue
            _send_again(job, panel, now=now, why="stuck")
            count += 1
    return count


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
    for pk, job_id, index, attempts in candidates:
        if beating[liveness.ticket(job_id, index, attempts)]:
            continue
        with transaction.atomic():
            locked = _lock_if_still(
                job_id=job_id, pk=pk, attempts=attempts, state=PanelState.RENDERING
            )
            # As the locked rows say: still this attempt, still rendering, still silent.
            if locked is None or liveness.alive(liveness.ticket(job_id, index, attempts)):
                continue
            _send_again(*locked, now=now, why="worker lost")
            count += 1
    return count


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
    count = 0
    for pk, job_id, attempts in unstarted:
        with transaction.atomic():
            locked = _lock_if_still(
                job_id=job_id, pk=pk, attempts=attempts, state=PanelState.PENDING
            )
            if locked is None or not locked[1].queued_at or locked[1].queued_at > cutoff:
                continue
            _send_again(*locked, now=now, why="never started")
            count += 1
    return count


def _lock_if_still(
    *, job_id: int, pk: int, attempts: int, state: str
) -> tuple[Job, JobPanel] | None:
    """Locks a job and its panel: (job, panel) if the job is live and the panel still
    waits in `state` for this attempt, None otherwise (it moved on meanwhile)."""
    job = Job.objects.select_for_update().get(pk=job_id)
    panel = job.panels.select_for_update().get(pk=pk)
    if not job.live or panel.attempts != attempts or panel.state != state:
        return None
    return job, panel


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
    queue = Queue.RENDER if _priority(job, panel) == Priority.CONFIRMED else Queue.SPECULATIVE
    dispatch.render_on_commit(job_id=job.pk, index=panel.index, attempt=panel.attempts, queue=queue)


def expire_job_if_due(*, job_id: int, now: datetime | None = None) -> bool:
    """The deadline task: expires the job if it is live and past its deadline."""
    now = now or timezone.now()
    job = Job.objects.filter(pk=job_id, state__in=LIVE_STATES).first()
    if job is None:
        return False
    return _end(
        job=job,
        state=JobState.EXPIRED,
        reason="Past its deadline.",
        now=now,
        only_if=lambda locked: past_deadline(locked, now),
    )[1]


def _end(
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
        job = Job.objects.select_for_update().get(pk=job.pk)
        if not job.live or (only_if is not None and not only_if(job)):
            return job, False
        panels = list(job.panels.select_for_update())
        _lock_open_holds(job)
        for panel in panels:
            if panel.state in (PanelState.PENDING, PanelState.RENDERING) and panel.attempts:
                _withdraw(job=job, panel=panel)
            _release_open_hold(panel, reason=f"job {state}: {reason}"[:200])
        _change(job, state=state, finished_at=now or timezone.now(), end_reason=reason)
        emit(job=job, type=EventType.CREDITS, data=credits_of(user_id=job.owner_id))
        job_ended.send(sender=Job, job=job, state=state, reason=reason)
    return job, True


# --- internals -----------------------------------------------------------------------------------


def _change(job: Job, **changes) -> None:
    """The one way a job changes state: set the fields, save them, and tell its clients
    (`job.state`, in the same transaction). The caller holds the job's row lock."""
    for name, value in changes.items():
        setattr(job, name, value)
    job.save(update_fields=list(changes))
    emit(job=job, type=EventType.JOB_STATE, data=state_data(job))


def _lock_attempt(job_id: int, index: int, attempt: int) -> tuple[Job | None, JobPanel | None]:
    """Locks a live job and its panel if `attempt` is still the panel's current render.

    (None, None) otherwise: a redelivered or superseded task then does nothing.
    """
    job = Job.objects.select_for_update().filter(pk=job_id).first()
    if job is None or not job.live:
        return None, None
    panel = job.panels.select_for_update().filter(index=index).first()
    return job, (panel if panel is not None and _waits_for(job, panel, attempt) else None)


def _waits_for(job: Job, panel: JobPanel, attempt: int) -> bool:
    """Whether the live job's panel still waits for this attempt's render: queued
    (perhaps sent again by a sweep) or rendering, under the attempt's own hold."""
    return (
        job.live
        and panel.attempts == attempt
        and panel.state in (PanelState.PENDING, PanelState.RENDERING)
        and panel.hold_id is not None  # None: reset by a rebase, the hold was released
    )


# A person's decisions on a panel, and the states a refusal names, in the person's words.
DECISIONS = {"approve": gettext_lazy("approve"), "redo": gettext_lazy("redo")}
JOB_STATE_WORDS: dict[str, Promise] = {
    JobState.QUEUED: gettext_lazy("queued"),
    JobState.RENDERING: gettext_lazy("rendering"),
    JobState.AWAITING_DECISION: gettext_lazy("awaiting decision"),
    JobState.COMPLETED: gettext_lazy("completed"),
    JobState.CANCELLED: gettext_lazy("cancelled"),
    JobState.EXPIRED: gettext_lazy("expired"),
    JobState.FAILED: gettext_lazy("failed"),
}
PANEL_STATE_WORDS: dict[str, Promise] = {
    PanelState.PENDING: gettext_lazy("pending"),
    PanelState.RENDERING: gettext_lazy("rendering"),
    PanelState.READY: gettext_lazy("ready"),
    PanelState.DELIVERED: gettext_lazy("delivered"),
    PanelState.APPROVED: gettext_lazy("approved"),
    PanelState.FAILED: gettext_lazy("failed"),
}


def _decision_panel(job: Job, index: int, *, allowed, verb: str) -> JobPanel:
    if job.state != JobState.AWAITING_DECISION or not job.confirmed:
        raise IllegalTransition(
            gettext("Cannot %(verb)s now: the job is %(state)s.")
            % {"verb": DECISIONS[verb], "state": JOB_STATE_WORDS[job.state]}
        )
    if index != job.current_index:
        raise IllegalTransition(
            gettext("Panel %(current)s is the one awaiting a decision, not %(index)s.")
            % {"current": job.current_index, "index": index}
        )
    panel = job.panels.select_for_update().get(index=index)
    if panel.state not in allowed:
        raise IllegalTransition(
            gettext("Cannot %(verb)s panel %(index)s: it is %(state)s.")
            % {"verb": DECISIONS[verb], "index": index, "state": PANEL_STATE_WORDS[panel.state]}
        )
    return panel


def _queue_lookahead(*, job: Job) -> int:
    """While the person decides on panel i, panels i+1…i+k render ahead under their own holds.

    They go to the capped `speculative` queue and are delivered (paid) only
    when reached; a person who cannot pay for them, or whose account was
    frozen meanwhile, simply gets none (the delivery they ride on stands).
    Returns how many renders it placed.
    """
    placed = 0
    ahead = job.panels.select_for_update().filter(
        index__gt=job.current_index,
        index__lte=job.current_index + settings.SPECULATION_LOOKAHEAD,
        state=PanelState.PENDING,
    )
    for panel in ahead.order_by("index"):
        if _has_open_hold(panel):
            continue
        try:
            with transaction.atomic():
                _queue_render(job=job, panel=panel, queue=Queue.SPECULATIVE, lookahead=True)
        except (ledger_errors.InsufficientCredits, ledger_errors.AccountFlagged):
            break
        placed += 1
    return placed


def _queue_render(
    *, job: Job, panel: JobPanel, queue: Queue | None = None, lookahead: bool = False
) -> None:
    """Places the render's hold (the key names job, panel and attempt) and enqueues it on commit."""
    panel.attempts += 1
    hold = ledger.authorize(
        account=ledger.account_for(job.owner),
        amount=1,
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
        _change(job, state=JobState.QUEUED)
    emit(
        job=job, type=EventType.PANEL_QUEUED, data={"index": panel.index, "attempt": panel.attempts}
    )
    emit(job=job, type=EventType.CREDITS, data=credits_of(user_id=job.owner_id))
    queue = queue or (Queue.RENDER if job.confirmed else Queue.SPECULATIVE)
    dispatch.render_on_commit(job_id=job.pk, index=panel.index, attempt=panel.attempts, queue=queue)


def _promote(*, job: Job, panel: JobPanel) -> None:
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
        dispatch.render_on_commit(
            job_id=job.pk, index=panel.index, attempt=panel.attempts, queue=Queue.RENDER
        )


def _withdraw(*, job: Job, panel: JobPanel) -> None:
    """A render of an ended job that still waits for a container, or for its boot, stops."""
    name = liveness.ticket(job.pk, panel.index, panel.attempts)
    transaction.on_commit(lambda: GpuPool().withdraw(name), robust=True)


def _priority(job: Job, panel: JobPanel) -> Priority:
    """Confirmed work is what a person is waiting for; the rest is speculation."""
    if job.confirmed and not panel.lookahead and panel.index == job.current_index:
        return Priority.CONFIRMED
    return Priority.SPECULATIVE


def _deliver(*, job: Job, panel: JobPanel, lookahead_now: bool = True) -> None:
    """Shows a ready panel to its confirmed job's owner; this is when the render is paid.

    Then the next panels render ahead: placed here, or (`lookahead_now=False`)
    by a worker once this transaction commits."""
    hold = panel.hold
    assert hold is not None, "a ready panel's render was paid with a hold"
    try:
        ledger.capture(hold=hold, key=f"{hold.key}:capture", reason="delivered")
    except (ledger_errors.HoldExpired, ledger_errors.HoldAlreadyResolved) as exc:
        panel.state = PanelState.FAILED
        panel.error = f"This render's hold ended before it could be shown ({exc}). Try it again."
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
        _change(job, state=JobState.AWAITING_DECISION)
    if panel.state == PanelState.DELIVERED and settings.SPECULATION_LOOKAHEAD:
        if lookahead_now:
            _queue_lookahead(job=job)
        else:
            dispatch.lookahead_on_commit(job_id=job.pk)


def queue_lookahead(*, job_id: int) -> int:
    """Places a confirmed live job's look-ahead now (the task `lookahead_on_commit`
    sends). Idempotent: a panel with an open hold is skipped. Returns how many
    renders it placed."""
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(pk=job_id).first()
        if job is None or not job.live or not job.confirmed:
            return 0
        return _queue_lookahead(job=job)


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
    )


def _complete(job: Job) -> None:
    _change(job, state=JobState.COMPLETED, finished_at=timezone.now())
    emit(job=job, type=EventType.JOB_DONE, data={"reader_url": reader_url(job)})
    job_ended.send(sender=Job, job=job, state=job.state, reason="completed")


def _has_open_hold(panel: JobPanel) -> bool:
    return (
        panel.hold_id is not None
        and panel.hold is not None
        and panel.hold.state == Hold.State.PENDING
    )


def _lock_open_holds(job: Job) -> None:
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


def _release_open_hold(panel: JobPanel, *, reason: str) -> bool:
    """Releases the panel's hold if it is still pending, as the hold's row says."""
    hold = panel.hold
    if hold is None:
        return False
    hold.refresh_from_db(fields=["state"])  # the sweep may have expired it meanwhile
    if hold.state != Hold.State.PENDING:
        return False
    try:
        ledger.release(hold=hold, reason=reason, key=f"{hold.key}:release")
    except ledger_errors.HoldAlreadyResolved:
        return False  # expired by the ledger's sweep between the read and the lock
    return True


def _schedule_deadline(job: Job) -> None:
    """A task at the deadline, when it is near; the periodic sweep is the backstop.

    Far deadlines (the 2 h TTL) are left to the sweep alone: Redis redelivers
    any task unacknowledged past the visibility timeout, ETA tasks included.
    """
    deadline = job.expires_at if job.confirmed else job.confirm_by
    horizon = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] / 2
    if deadline is not None and (deadline - timezone.now()).total_seconds() < horizon:
        dispatch.expire_on_commit(job_id=job.pk, eta=deadline)


__all__ = [
    "IllegalTransition",
    "JobError",
    "NothingToRender",
    "RenderError",
    "StoryboardIncomplete",
    "approve_panel",
    "cancel_job",
    "confirm_job",
    "expire_due_jobs",
    "fail_render",
    "generate",
    "perform_render",
    "redo_panel",
    "start_job",
]
