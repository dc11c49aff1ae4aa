"""The worker's side of a render: perform_render over three transactions (mark the
panel rendering; render holding no database connection, beating; keep what it drew),
and what a render tells its job on the way (the provider's state, a retry, a failure).

A render task redelivered, or sent again by a sweep (recovery.py), is safe: only the
attempt the panel still waits for (`lock_attempt`) does anything.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from mangagen.kernel import paid_render
from mangagen.observability import metrics
from mangagen.observability.metrics import RenderOutcome
from mangagen.renderers import RenderError, get_renderer, observed, regions
from mangagen.renderers.base import RenderResult, StateChange, TouchUpSpec
from mangagen.renderers.gpu_pool import Priority, Withdrawn

from . import judging, liveness, touchups
from .events import EventType, emit
from .lock_objects import lock_job, try_lock_job, try_lock_panel
from .models import JobKind, JobPanel, JobState, PanelState, RenderAttempt
from .selectors import credits_of
from .specs import panel_spec
from .steps import (
    change_job,
    deliver_panel,
    lock_attempt,
    queue_lookahead_renders,
    render_priority,
    waits_for,
)

logger = logging.getLogger(__name__)


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
        job, panel = lock_attempt(job_id, index, attempt)
        if job is None or panel is None:
            return RenderOutcome.STALE
        twin = panel.state == PanelState.RENDERING and liveness.alive(name)
    # Another copy of this attempt beats (a promotion's twin, or the copy a worker was
    # killed under, whose last beat has not expired yet): let it finish, or take over
    # once it falls silent.
    if twin and not _outlive_twin(job_id=job_id, index=index, attempt=attempt, name=name):
        return RenderOutcome.DUPLICATE
    with transaction.atomic():
        job, panel = lock_attempt(job_id, index, attempt)
        if job is None or panel is None:
            return RenderOutcome.STALE
        if panel.state == PanelState.RENDERING and liveness.alive(name):
            return RenderOutcome.DUPLICATE
        priority = render_priority(job, panel)
        # Alive from the moment the panel says RENDERING (the sweep's clock starts there),
        # not from when this worker, slowed down on a loaded machine, gets to its wait.
        heartbeat.beat()
        panel.state = PanelState.RENDERING
        panel.render_started_at = timezone.now()
        panel.save(update_fields=["state", "render_started_at"])
        if index == job.current_index and job.state != JobState.RENDERING:
            change_job(job, state=JobState.RENDERING)
        wait = getattr(renderer, "expected_wait", lambda: None)()
        emit(
            job=job,
            type=EventType.PANEL_RENDERING,
            data={"index": index, "attempt": attempt, "warming": bool(wait), "warm_in": wait},
        )
        spec = panel_spec(job, panel)
        touch = touchups.touchup_of(job_id=job_id, index=index, attempt=attempt)
        region = touchups.touchup_spec(touch, spec) if touch is not None else None
        kept_faces = (touch.take.faces if touch.take else {}) if touch is not None else None
    paid_render.hold_no_connection()  # the wait for a container or a provider can be long
    if touch is not None and region is None:
        raise RenderError("The take to touch up was deleted.", retryable=False)

    def on_state(change: StateChange) -> None:
        note_provider_state(job_id=job_id, index=index, attempt=attempt, change=change)

    with heartbeat:
        try:
            if region is not None:
                result = renderer.touch_up(
                    region,
                    region.default_seed() + attempt - 1,
                    ticket=name,
                    priority=priority,
                    on_state=on_state,
                )
                _composite(result, region, faces=kept_faces)
            else:
                result = renderer.render(
                    spec,
                    spec.default_seed() + attempt - 1,
                    ticket=name,
                    priority=priority,
                    on_state=on_state,
                )
        except Withdrawn as withdrawn:
            return _withdrawn(job_id=job_id, index=index, attempt=attempt, withdrawn=withdrawn)

        def redraw(seed: int, ticket: str, beat) -> RenderResult:
            """A redraw the judge asks for: a touch-up's redraws only its region again."""
            if region is None:
                return renderer.render(
                    spec, seed, ticket=ticket, priority=Priority.SPECULATIVE, while_waiting=beat
                )
            again = renderer.touch_up(
                region, seed, ticket=ticket, priority=Priority.SPECULATIVE, while_waiting=beat
            )
            _composite(again, region, faces=kept_faces)
            return again

        # Checked before shown (judging.py): its redraws are this attempt's, under its hold.
        checked = judging.check_render(
            first=result,
            spec=spec,
            seed=(region.default_seed() if region is not None else spec.default_seed())
            + attempt
            - 1,
            ticket=name,
            redraw=redraw,
            person=job.owner_id,
        )
    observed.record(result)
    phases = metrics.phases_of(result.metadata, result.seconds)
    metrics.observe_render_phases(result.metadata, result.seconds)
    result = checked.result
    with transaction.atomic():
        job = lock_job(pk=job_id)
        panel = try_lock_panel(job=job, index=index)
        if panel is None or not waits_for(job, panel, attempt):
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
        panel.judge_check = checked.check
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
            deliver_panel(job=job, panel=panel)
            _ended(job_id, index, attempt, outcome=RenderOutcome.DELIVERED, phases=phases)
            delivered = True
        else:
            if index == job.current_index and job.state != JobState.AWAITING_DECISION:
                change_job(job, state=JobState.AWAITING_DECISION)
            _ended(job_id, index, attempt, outcome=RenderOutcome.READY, phases=phases)
            delivered = False
    if delivered:
        touchups.settle_own_job(job_id=job_id)  # a touch-up's own job ends with it
        return RenderOutcome.DELIVERED
    return RenderOutcome.READY


def _composite(result: RenderResult, region: TouchUpSpec, *, faces: dict | None) -> None:
    """A touch-up's picture: whatever the provider did outside the region is undone here
    (its output composited into the take through the mask); the take's faces stay."""
    try:
        result.image = regions.composite(region.image, result.image, region.mask)
    except regions.MaskError as exc:
        raise RenderError(
            f"The provider's picture could not be used: {exc}", retryable=False
        ) from exc
    result.content_type = "image/png"
    result.width, result.height = regions.size_of(result.image)
    result.metadata["faces"] = faces or {}


def note_provider_state(*, job_id: int, index: int, attempt: int, change: StateChange) -> None:
    """Tells the job's page where its render stands at a remote provider (queued there,
    booting, drawing, the provider not answering: `panel.provider`), while it still is
    the render the panel waits for."""
    with transaction.atomic():
        job, panel = lock_attempt(job_id, index, attempt)
        if job is not None and panel is not None and panel.state == PanelState.RENDERING:
            data = {"index": index, "attempt": attempt, "state": str(change.state)}
            emit(
                job=job,
                type=EventType.PANEL_PROVIDER,
                data=data | {"detail": change.detail, "retry_in": change.retry_in},
            )
    paid_render.hold_no_connection()  # the render goes on waiting


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


def _draw_lettering_ahead(panel_pk: int) -> None:
    """After a render commits, its worker draws the lettered picture the person will
    be shown, so that showing it costs a cache read. Best effort: the image view
    draws it itself on a miss."""
    from .lettered_images import draw_ahead  # it imports the page composer

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
        job = try_lock_job(pk=job_id)
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
        job, panel = lock_attempt(job_id, index, attempt)
        if job is None or panel is None:
            return
        logger.warning("Render %s failed: %s", liveness.ticket(job_id, index, attempt), detail)
        _ended(job_id, index, attempt, outcome=RenderOutcome.FAILED, phases={})
        paid_render.release(
            panel.hold, reason=paid_render.failure_reason(error=error, detail=detail)
        )
        # A failed touch-up of a panel shown on a render job leaves it shown, as it was
        # (its picture is still the take the touch-up was drawn over).
        kept = (
            job.kind == JobKind.RENDER
            and bool(panel.image)
            and touchups.touchup_of(job_id=job_id, index=index, attempt=attempt) is not None
        )
        panel.state = PanelState.DELIVERED if kept else PanelState.FAILED
        panel.error = error[:500]
        panel.save(update_fields=["state", "error", "hold"])
        emit(
            job=job,
            type=EventType.PANEL_FAILED,
            data={"index": index, "attempt": attempt, "error": panel.error},
        )
        emit(job=job, type=EventType.CREDITS, data=credits_of(user_id=job.owner_id))
        if index == job.current_index:
            change_job(job, state=JobState.AWAITING_DECISION)
    touchups.settle_own_job(job_id=job_id)  # a touch-up's own job fails with it


def queue_lookahead(*, job_id: int) -> int:
    """Places a confirmed live job's look-ahead now (the task `lookahead_on_commit`
    sends). Idempotent: a panel with an open hold is skipped. Returns how many
    renders it placed."""
    with transaction.atomic():
        job = try_lock_job(pk=job_id)
        if job is None or not job.live or not job.confirmed:
            return 0
        return queue_lookahead_renders(job=job)
