"""A render attempt of a job's panel on the worker: what the panel, redo and touch-up
kinds (kinds/) share, in three transactions around the draw.

- prepare: the panel marked RENDERING (its clock for the sweeps starts there) and the
  request built, under the job's and the panel's row locks;
- the draw: holding no database connection, beating (liveness.py); the pool's confirmed
  queue for the render a person waits for;
- keep: the picture kept as ready, and delivered (paid) when its confirmed job is on it.

A render task redelivered, or sent again by a sweep (recovery.py), is safe: only the
attempt the panel still waits for (`lock_attempt`) does anything, and a twin of it
that still beats is left the render.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from mangagen.kernel import paid_render
from mangagen.observability import metrics
from mangagen.observability.metrics import RenderOutcome
from mangagen.render_kinds.kind import Checked, RenderKind, Request, Work
from mangagen.renderers import PanelSpec, RenderError, RenderResult, observed
from mangagen.renderers.base import StateChange, Verb
from mangagen.renderers.gpu_pool import Priority, Withdrawn

from . import finals, judging, liveness
from .events import EventType, emit
from .kinds.judge_redraw import JUDGE_REDRAW
from .lock_objects import lock_job, try_lock_job, try_lock_panel
from .models import Job, JobPanel, JobState, PanelState, RenderAttempt
from .selectors import credits_of
from .specs import panel_spec
from .steps import change_job, deliver_panel, lock_attempt, render_priority, waits_for

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Attempt:
    """One render attempt of one panel of a job: what a render task names."""

    job_id: int
    index: int
    attempt: int

    @property
    def ticket(self) -> str:
        """Its name in the GPU pool's queues and for its heartbeat."""
        return liveness.ticket(self.job_id, self.index, self.attempt)

    def __str__(self) -> str:
        return f"job {self.job_id} panel {self.index} attempt {self.attempt}"


@dataclass(frozen=True)
class Drawn:
    """What an attempt keeps for its picture's arrival: the panel's spec (what the judge
    checks against), for a touch-up the faces of the take it is drawn over, and whose
    render it is (the judge's redraws are bounded per person)."""

    panel: PanelSpec
    faces: dict | None = None
    person: int | None = None


class AttemptKind(RenderKind):
    """A render attempt of a job's panel. A kind of it says its `credits` and `name`, and
    how its request is built (`request`) if not as a panel's."""

    verb = Verb.RENDER

    def priority_of(self, job: Job, panel: JobPanel) -> Priority:
        """The render a person waits for is confirmed work; the rest is speculation
        (steps.render_priority, which also picks its queue)."""
        return render_priority(job, panel)

    def request(
        self, job: Job, panel: JobPanel, ref: Attempt
    ) -> tuple[Request, Drawn] | RenderError:
        """The panel as the job froze it, at the shape of its page cell; its first attempt
        drawn from its rough when the rough is ready (finals.py), a redo with the next
        seed. A RenderError when it cannot be drawn (raised once the panel says RENDERING)."""
        spec = panel_spec(job, panel, aspect=finals.cell_aspect(job, panel))
        return finals.request_for(job, panel, spec, attempt=ref.attempt), Drawn(spec)

    def prepare(self, ref: Attempt) -> Work | str:
        """The attempt's render, the panel marked RENDERING; or "stale" (the panel moved
        on) or "duplicate" (a twin of this attempt beats: it renders)."""
        renderer = self.renderer()
        with transaction.atomic():
            job, panel = lock_attempt(ref.job_id, ref.index, ref.attempt)
            if job is None or panel is None:
                return RenderOutcome.STALE
            twin = panel.state == PanelState.RENDERING and liveness.alive(ref.ticket)
        # Another copy of this attempt beats (a promotion's twin, or the copy a worker was
        # killed under, whose last beat has not expired yet): let it finish, or take over
        # once it falls silent.
        if twin and not _outlive_twin(ref):
            return RenderOutcome.DUPLICATE
        heartbeat = liveness.Heartbeat(ref.ticket)
        with transaction.atomic():
            job, panel = lock_attempt(ref.job_id, ref.index, ref.attempt)
            if job is None or panel is None:
                return RenderOutcome.STALE
            if panel.state == PanelState.RENDERING and liveness.alive(ref.ticket):
                return RenderOutcome.DUPLICATE
            priority = self.priority_of(job, panel)
            # Alive from the moment the panel says RENDERING (the sweep's clock starts
            # there), not from when this worker, slowed down, gets to its wait.
            heartbeat.beat()
            _mark_rendering(job, panel, ref, wait=getattr(renderer, "expected_wait", None))
            built = self.request(job, panel, ref)
        if isinstance(built, RenderError):
            raise built
        request, drawn = built
        drawn = dataclasses.replace(drawn, person=job.owner_id)
        # A rough still being drawn is waited for a moment, beating: the final then keeps
        # the composition the person sees on the rough pages (finals.py).
        request = finals.once_the_rough_is_in(
            job, panel, request, attempt=ref.attempt, beat=heartbeat.beat
        )
        return Work(
            ref,
            finals.renderer_of(request, renderer),
            request,
            ticket=ref.ticket,
            priority=priority,
            beats=heartbeat,
            on_state=partial(note_provider_state, ref),
            extra=drawn,
        )

    def check(self, work: Work, result: RenderResult) -> Checked:
        """Checked before shown (judging.py): its redraws are this attempt's, drawn as the
        judge's redraw kind says, under this attempt's hold."""
        return judging.check_render(
            first=result,
            spec=work.extra.panel,
            seed=work.request.seed,
            ticket=work.ticket,
            redraw=partial(JUDGE_REDRAW.redraw, self, work),
            person=work.extra.person,
        )

    def keep(self, work: Work, first: RenderResult, checked: Checked) -> str:
        """Keeps the picture as the panel's: delivered (paid) when its confirmed job is on
        it, ready otherwise; "discarded" when the panel moved on while it rendered."""
        ref, result = work.ref, checked.result
        phases = metrics.phases_of(first.metadata, first.seconds)
        metrics.observe_render_phases(first.metadata, first.seconds)
        with transaction.atomic():
            job = lock_job(pk=ref.job_id)
            panel = try_lock_panel(job=job, index=ref.index)
            if panel is None or not waits_for(job, panel, ref.attempt):
                # Cancelled, expired or replaced while rendering: GPU time spent for
                # nothing, logged so what speculation wastes can be counted. (Sent again
                # by the sweep while it still ran, the panel still waits for it.)
                emit(
                    job=job,
                    type=EventType.PANEL_DISCARDED,
                    data=_about(ref, seconds=round(result.seconds, 2)),
                )
                _ended(ref, outcome=RenderOutcome.DISCARDED, phases=phases)
                return RenderOutcome.DISCARDED
            _keep_ready(job, panel, ref, checked)
            outcome = _deliver_or_wait(job, panel)
            _ended(ref, outcome=outcome, phases=phases)
        if outcome == RenderOutcome.DELIVERED:
            self.after(ref)
        return outcome

    def withdrawn(self, work: Work, withdrawn: Withdrawn) -> str:
        """A render whose job ended while it waited: recorded with what cancelling it at
        the provider saved, if it was cancelled there."""
        outcome, saved = RenderOutcome.WITHDRAWN, None
        if withdrawn.cancelled_at_provider:
            outcome = RenderOutcome.CANCELLED_AT_PROVIDER
            saved = observed.saved_seconds(
                observed.current(), state=withdrawn.state, phases=withdrawn.phases
            )
        _ended(work.ref, outcome=outcome, phases=withdrawn.phases, saved=saved)
        return outcome

    def retrying(self, ref: Attempt, *, error: str, retry_in: float) -> None:
        """Tells the job's page that the render is tried again in `retry_in` seconds."""
        with transaction.atomic():
            job = try_lock_job(pk=ref.job_id)
            if job is not None and job.live:
                emit(
                    job=job,
                    type=EventType.PANEL_RETRYING,
                    data=_about(ref, error=error, retry_in=retry_in),
                )

    def fail(self, ref: Attempt, *, error: str, detail: str = "") -> None:
        """The render failed for good: its hold released, the panel failed (or left as it
        was shown, `after_failure`), the person may try again. `error` is what the person
        is told; `detail` (the provider's own words) goes in the hold's release, which
        operators read (the person's history shows the failed-render sentence)."""
        with transaction.atomic():
            job, panel = lock_attempt(ref.job_id, ref.index, ref.attempt)
            if job is not None and panel is not None:
                _ended(ref, outcome=RenderOutcome.FAILED, phases={})
                paid_render.release(
                    panel.hold, reason=paid_render.failure_reason(error=error, detail=detail)
                )
                panel.state = self.after_failure(job, panel)
                panel.error = error[:500]
                panel.save(update_fields=["state", "error", "hold"])
                emit(job=job, type=EventType.PANEL_FAILED, data=_about(ref, error=panel.error))
                emit(job=job, type=EventType.CREDITS, data=credits_of(user_id=job.owner_id))
                if ref.index == job.current_index:
                    change_job(job, state=JobState.AWAITING_DECISION)
        self.after(ref)

    def after_failure(self, job: Job, panel: JobPanel) -> str:
        """The state a panel whose render failed is left in."""
        return PanelState.FAILED

    def after(self, ref: Attempt) -> None:
        """What follows the attempt once it was delivered or failed (nothing, here)."""


def note_provider_state(ref: Attempt, change: StateChange) -> None:
    """Tells the job's page where its render stands at a remote provider (queued there,
    booting, drawing, the provider not answering: `panel.provider`), while it still is
    the render the panel waits for."""
    with transaction.atomic():
        job, panel = lock_attempt(ref.job_id, ref.index, ref.attempt)
        if job is not None and panel is not None and panel.state == PanelState.RENDERING:
            about = _about(ref, state=str(change.state), detail=change.detail)
            emit(job=job, type=EventType.PANEL_PROVIDER, data=about | {"retry_in": change.retry_in})
    paid_render.hold_no_connection()  # the render goes on waiting


def _ended(ref: Attempt, *, outcome: str, phases: dict, saved: float | None = None) -> None:
    """Records how a render attempt ended (its own row: nothing else reads or locks it)."""
    RenderAttempt.objects.filter(job_id=ref.job_id, index=ref.index, attempt=ref.attempt).update(
        outcome=outcome, phases=phases, provider_seconds_saved=saved
    )


def _about(ref: Attempt, **data: Any) -> dict:
    """An event's data about this attempt of the panel."""
    return {"index": ref.index, "attempt": ref.attempt, **data}


def _mark_rendering(job: Job, panel: JobPanel, ref: Attempt, *, wait) -> None:
    """The panel says RENDERING, and its page is told when a container may be ready."""
    panel.state = PanelState.RENDERING
    panel.render_started_at = timezone.now()
    panel.save(update_fields=["state", "render_started_at"])
    if ref.index == job.current_index and job.state != JobState.RENDERING:
        change_job(job, state=JobState.RENDERING)
    warm_in = wait() if wait is not None else None
    emit(
        job=job,
        type=EventType.PANEL_RENDERING,
        data=_about(ref, warming=bool(warm_in), warm_in=warm_in),
    )


def _keep_ready(job: Job, panel: JobPanel, ref: Attempt, checked: Checked) -> None:
    """The picture becomes the panel's, READY; its lettering is drawn ahead once committed."""
    result = checked.result
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
        data=_about(ref, cold=result.cold, seconds=round(result.seconds, 2)),
    )


def _deliver_or_wait(job: Job, panel: JobPanel) -> str:
    """Shown now (delivered, paid) when its confirmed job is on this panel; otherwise
    ready, and the job waits for the person's decision if it is on it."""
    if job.confirmed and panel.index == job.current_index:
        deliver_panel(job=job, panel=panel)
        return RenderOutcome.DELIVERED
    if panel.index == job.current_index and job.state != JobState.AWAITING_DECISION:
        change_job(job, state=JobState.AWAITING_DECISION)
    return RenderOutcome.READY


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


def _outlive_twin(ref: Attempt) -> bool:
    """Waits while a twin of this attempt beats: True once it is silent and the panel
    still waits for this attempt (take over), False if the panel moved on or the twin
    still beats after a heartbeat's lifetime (it is alive: leave it the render)."""
    for _ in range(int(settings.RENDER_HEARTBEAT_SECONDS * 3 / 0.25) + 8):
        time.sleep(0.25)
        waiting = JobPanel.objects.filter(
            job_id=ref.job_id, index=ref.index, attempts=ref.attempt, state=PanelState.RENDERING
        ).exists()
        if not waiting:
            return False
        if not liveness.alive(ref.ticket):
            return True
    return False
