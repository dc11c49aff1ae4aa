"""A person's decisions on a render job: Generate (start, attach, confirm), approve, redo,
cancel. Each one keyword-only, atomic and row-locked, in the lock order steps.py states.

The worker's side is rendering.py (a render attempt run as its kind, kinds/ and
attempts.py); the sweeps are recovery.py; what they share (a
job's state change, a render's hold and queue, delivery, ending a job) is steps.py.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext, gettext_lazy

from mangagen.kernel import paid_render, quotas
from mangagen.storyboards.lock_objects import lock_storyboard
from mangagen.storyboards.models import Storyboard, panels_complete
from mangagen.storyboards.selectors import current_takes

from .errors import IllegalTransition, JobError, NothingToRender, StoryboardIncomplete
from .events import EventType, emit
from .kinds.panel import PANEL, REDO
from .lock_objects import (
    lock_job,
    lock_next_unapproved_panel,
    lock_open_holds,
    lock_panel,
    lock_panels,
    try_lock_panel_to_deliver,
)
from .models import LIVE_STATES, GenerateOutcome, Job, JobKind, JobPanel, JobState, PanelState
from .signals import generate_requested, job_confirmed
from .specs import spec_of
from .steps import (
    change_job,
    complete_job,
    deliver_panel,
    end_job,
    has_open_hold,
    past_deadline,
    promote_panel,
    queue_render,
    schedule_deadline,
)


def check_live_jobs(*, user, storyboard) -> None:
    """Raises LimitReached when `user` already renders MAX_LIVE_JOBS_PER_PERSON other comics."""
    cap = settings.MAX_LIVE_JOBS_PER_PERSON
    others = Job.objects.filter(owner=user, confirmed=True, state__in=LIVE_STATES).exclude(
        storyboard=storyboard
    )
    if others.count() >= cap:
        raise quotas.LimitReached(
            quotas.Limit.LIVE_JOBS,
            gettext("%(cap)s of your comics are rendering already; finish or stop one first.")
            % {"cap": cap},
        )


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
            if live.kind == JobKind.TOUCHUP:
                # A touch-up's own job lasts one render: Generate is asked again after it.
                raise JobError(
                    gettext(
                        "A touch-up of this comic is being drawn; Generate again once it is shown."
                    )
                )
            storyboard.refresh_from_db()
            if live.version == storyboard.version:
                return live, GenerateOutcome.EXISTING
            cancel_job(job=live, reason="The storyboard changed; a new job replaced this one.")
        check_live_jobs(user=user, storyboard=storyboard)
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
        job = new_job(
            user=user,
            storyboard=storyboard,
            confirmed=confirmed,
            now=now,
            confirm_by=None if confirmed else confirm_by,
        )
        JobPanel.objects.bulk_create(job_panel_for(job, p, takes) for p in panels)
        job = lock_job(pk=job.pk)
        missing = job.panels.exclude(state=PanelState.APPROVED).order_by("index").first()
        if missing is None:  # every panel is kept: nothing to render, nothing to pay
            complete_job(job)
            return job
        change_job(job, current_index=missing.index)
        queue_render(job=job, panel=missing, kind=PANEL)
        schedule_deadline(job)
    return job


def new_job(*, user, storyboard: Storyboard, confirmed: bool, now: datetime, **fields) -> Job:
    """A job of the storyboard as it is (its version, style and cast) with `fields`:
    confirmed `now` (and so expiring, `expiry_of`), or not confirmed yet."""
    return Job.objects.create(
        owner=user,
        storyboard=storyboard,
        version=storyboard.version,
        style=storyboard.style,
        cast={c.name: c.description for c in storyboard.characters.all()},
        confirmed=confirmed,
        confirmed_at=now if confirmed else None,
        expires_at=expiry_of(now) if confirmed else None,
        **fields,
    )


def expiry_of(confirmed_at: datetime) -> datetime:
    """When a job confirmed at `confirmed_at` expires: JOB_TTL_SECONDS later."""
    return confirmed_at + timedelta(seconds=settings.JOB_TTL_SECONDS)


def job_panel_for(job: Job, panel, takes: dict) -> JobPanel:
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
        job = lock_job(pk=job.pk)
        if job.confirmed or not job.live:
            return job
        # At or past confirm_by the job is due (the rule the deadline task and the
        # sweep use): it expires now rather than being confirmed.
        if past_deadline(job, timezone.now()):
            return end_job(job=job, state=JobState.EXPIRED, reason="Past its deadline.")[0]
        lock_open_holds(job=job)
        if storyboard.version != job.version:
            _rebase(job=job, storyboard=storyboard)
        now = timezone.now()
        change_job(
            job,
            confirmed=True,
            confirmed_at=now,
            expires_at=expiry_of(now),
            # as _rebase left them
            version=job.version,
            style=job.style,
            cast=job.cast,
            current_index=job.current_index,
        )
        job_confirmed.send(sender=Job, job=job)
        current = try_lock_panel_to_deliver(job=job, index=job.current_index)
        if current is None or current.state == PanelState.APPROVED:
            # Edited back to kept art, or the panel it was drawing removed and
            # every one left kept: nothing to draw.
            return end_job(job=job, state=JobState.CANCELLED, reason="Every panel is kept.")[0]
        if current.state == PanelState.READY:
            # The person waits for this request: the look-ahead (more holds,
            # events and renders) is placed by a worker right after it.
            deliver_panel(job=job, panel=current, lookahead_now=False)
        elif current.state == PanelState.PENDING and not has_open_hold(current):
            queue_render(job=job, panel=current, kind=PANEL)
        elif current.state in (PanelState.PENDING, PanelState.RENDERING):
            promote_panel(job=job, panel=current)
        schedule_deadline(job)
    return job


def _rebase(*, job: Job, storyboard: Storyboard) -> None:
    fresh = {p.index: p for p in storyboard.panels.all()}
    takes = current_takes(storyboard=storyboard)
    for panel in lock_panels(job=job):
        new = fresh.get(panel.index)
        if new is not None and new.art_hash == panel.art_hash:
            panel.content_hash, panel.spec = new.content_hash, spec_of(new)
            panel.save(update_fields=["content_hash", "spec"])
            continue
        paid_render.release(
            panel.hold, reason="The storyboard changed before this render was shown."
        )
        if new is None:
            panel.delete()
            continue
        kept = job_panel_for(job, new, takes)
        panel.content_hash, panel.art_hash, panel.spec = new.content_hash, new.art_hash, kept.spec
        panel.state, panel.image, panel.faces = kept.state, kept.image, kept.faces
        panel.error, panel.hold = "", None
        panel.judge_check = None  # the judge's word was on the render let go
        panel.save()
    existing = set(job.panels.values_list("index", flat=True))
    JobPanel.objects.bulk_create(
        job_panel_for(job, p, takes) for i, p in fresh.items() if i not in existing
    )
    current = job.panels.exclude(state=PanelState.APPROVED).order_by("index").first()
    if current is not None:
        job.current_index = current.index
    job.version = storyboard.version
    job.style = storyboard.style  # what the panels still to draw are drawn in
    job.cast = {c.name: c.description for c in storyboard.characters.all()}
    emit(job=job, type=EventType.JOB_REBASED, data={"version": job.version, "total": len(fresh)})


def approve_panel(*, job: Job, index: int) -> Job:
    """Approves the panel awaiting a decision and starts the next one.

    Raises IllegalTransition, or InsufficientCredits when the next render
    cannot be paid for (then nothing changes).
    """
    with transaction.atomic():
        lock_storyboard(pk=job.storyboard_id)  # the last approval ends the job
        job = lock_job(pk=job.pk)
        panel = _decision_panel(job, index, allowed=(PanelState.DELIVERED,), verb="approve")
        panel.state = PanelState.APPROVED
        panel.save(update_fields=["state"])
        emit(job=job, type=EventType.PANEL_APPROVED, data={"index": index})
        following = lock_next_unapproved_panel(job=job, after=index)  # kept art needs no render
        if following is None:
            complete_job(job)
            return job
        job.current_index = following.index
        job.save(update_fields=["current_index"])
        if following.state == PanelState.READY:
            deliver_panel(job=job, panel=following)
        elif following.state in (PanelState.PENDING, PanelState.FAILED) and not has_open_hold(
            following
        ):
            queue_render(job=job, panel=following, kind=PANEL)
        else:  # already rendering (look-ahead): it is delivered when it lands
            promote_panel(job=job, panel=following)
            change_job(job, state=JobState.RENDERING)
    return job


def redo_panel(*, job: Job, index: int) -> Job:
    """Renders the panel awaiting a decision again, under a new hold.

    Raises IllegalTransition or InsufficientCredits (then nothing changes).
    """
    with transaction.atomic():
        job = lock_job(pk=job.pk)
        panel = _decision_panel(
            job, index, allowed=(PanelState.DELIVERED, PanelState.FAILED), verb="redo"
        )
        queue_render(job=job, panel=panel, kind=REDO)
    return job


def cancel_job(*, job: Job, reason: str = "Cancelled.", only_if_unconfirmed: bool = False) -> Job:
    """Ends a live job and releases every open hold at once. Idempotent.

    With `only_if_unconfirmed` (a Review tab's beacon, a newer speculation) a
    job confirmed by then, as its locked row says, is left as it is.
    """
    only_if = (lambda locked: not locked.confirmed) if only_if_unconfirmed else None
    return end_job(job=job, state=JobState.CANCELLED, reason=reason, only_if=only_if)[0]


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
    panel = lock_panel(job=job, index=index)
    if panel.state not in allowed:
        raise IllegalTransition(
            gettext("Cannot %(verb)s panel %(index)s: it is %(state)s.")
            % {"verb": DECISIONS[verb], "index": index, "state": PANEL_STATE_WORDS[panel.state]}
        )
    return panel
