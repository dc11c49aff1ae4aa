"""Starting work while the person reads Review; cheapest gates first, silent when declined.

Gates, in order: speculation enabled → storyboard complete (and the
caller's: the view's 404) → the person has not left already (the page's
token) → one live speculation per person (a newer one replaces the older) →
the global cap on unconfirmed jobs, and a smaller share of it for people who
never attached to a speculation (`capacity`) → shed when confirmed work is
waiting (`busy`) → the budgets (`budget`) → expected benefit: predicted to
finish before the person would click Generate (`late`) → a 1-credit hold, in
the request. Only then is an unconfirmed job created and panel one enqueued.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from ledger import errors as ledger_errors
from ledger.models import Hold
from mangagen.jobs import services as jobs
from mangagen.jobs.errors import StoryboardIncomplete
from mangagen.jobs.models import LIVE_STATES, Job, JobPanel, PanelState
from mangagen.storyboards.lock_objects import lock_storyboards
from mangagen.storyboards.models import Storyboard

from . import admission
from .lock_objects import lock_person
from .models import DeclineReason, Outcome, Speculation

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def speculate(*, user: User, storyboard: Storyboard, token: str = "") -> Speculation:
    """Returns a live speculation (its job holds panel one's credit) or a declined one.

    `token` is made by the Review page and sent again by its beacon when the
    person leaves (`leave`), even before this answer arrives.
    """
    if not settings.SPECULATION_ENABLED:
        return _declined(user, storyboard, DeclineReason.DISABLED, token)
    if not storyboard.complete:
        return _declined(user, storyboard, DeclineReason.INCOMPLETE, token)
    with transaction.atomic():
        # One person's speculations are decided one at a time.
        lock_person(user=user)
        if token:
            earlier = Speculation.objects.filter(user=user, token=token).first()
            if earlier is not None:
                return earlier  # a repeat, or the beacon said the person left already
        lives = list(
            Speculation.objects.filter(user=user, outcome=Outcome.LIVE).select_related("job")
        )
        # Then the comics whose jobs this may start or end, in pk order (the one lock
        # order: storyboards/lock_objects.py), before any job.
        locked = {
            comic.pk: comic
            for comic in lock_storyboards(pks=[storyboard.pk, *(s.storyboard_id for s in lives)])
        }
        if storyboard.pk not in locked:
            raise Storyboard.DoesNotExist("The comic was deleted.")
        storyboard = locked[storyboard.pk]
        for live in lives:
            if (
                live.storyboard_id == storyboard.pk
                and live.version == storyboard.version
                and live.job is not None
                and live.job.live
                and not live.job.confirmed
            ):
                return live  # the same storyboard and version: the same job
            _invalidate(live)
        decline = _gate(user)
        if isinstance(decline, DeclineReason):
            return _declined(user, storyboard, decline, token)
        try:
            with transaction.atomic():
                job = jobs.start_job(
                    user=user,
                    storyboard=storyboard,
                    confirmed=False,
                    confirm_by=timezone.now()
                    + timedelta(seconds=settings.SPECULATION_CONFIRM_SECONDS),
                )
        except ledger_errors.InsufficientCredits:
            return _declined(user, storyboard, DeclineReason.INSUFFICIENT_CREDITS, token)
        except ledger_errors.AccountFlagged:
            return _declined(user, storyboard, DeclineReason.FLAGGED, token)
        except StoryboardIncomplete:
            return _declined(user, storyboard, DeclineReason.INCOMPLETE, token)
        except IntegrityError:
            return _declined(user, storyboard, DeclineReason.JOB_IN_PROGRESS, token)
        return Speculation.objects.create(
            user=user,
            storyboard=storyboard,
            version=storyboard.version,
            job=job,
            token=token,
            predicted_seconds=decline,
        )


def _gate(user: User) -> DeclineReason | float | None:
    """The gates between the person's own state and the hold: a reason to decline, or
    the predicted finish (seconds) of a render worth starting (None if unknown)."""
    unconfirmed = Job.objects.filter(confirmed=False, state__in=LIVE_STATES).count()
    if unconfirmed >= settings.SPECULATION_MAX_INFLIGHT:
        return DeclineReason.CAPACITY
    if not admission.proven(user) and admission.unproven_inflight() >= admission.unproven_cap():
        return DeclineReason.CAPACITY
    if confirmed_backlog() > settings.SPECULATION_BACKLOG_MAX:
        return DeclineReason.BUSY
    if admission.global_used() >= settings.SPECULATION_BUDGET_PER_HOUR:
        return DeclineReason.BUDGET
    if not admission.person_budget(user).allowed:
        return DeclineReason.BUDGET
    try:
        forecast = admission.forecast()
    except Exception:  # the pool cannot be read (Redis away): no prediction, no veto
        return None
    if forecast.confirmed_waiting > 0:
        return DeclineReason.BUSY  # a speculative render would not get a container anyway
    if forecast.chance < settings.SPECULATION_MIN_CHANCE:
        return DeclineReason.LATE
    return forecast.finish_seconds


def leave(*, user: User, storyboard: Storyboard, token: str) -> Speculation:
    """The Review page's beacon: the person left. Ends the speculation the token names
    (its hold released, unless Generate confirmed it meanwhile, as its locked job says);
    if its request is still being answered, it will find this and start nothing."""
    with transaction.atomic():
        lock_person(user=user)
        speculation = Speculation.objects.filter(user=user, token=token).first()
        # The comics before the speculation's row and its job (the one lock order):
        # Generate holds its comic, then its job, then marks the speculation a hit.
        comics = {storyboard.pk} | ({speculation.storyboard_id} if speculation else set())
        lock_storyboards(pks=comics)
        now = timezone.now()
        if speculation is None:
            return Speculation.objects.create(
                user=user,
                storyboard=storyboard,
                version=storyboard.version,
                outcome=Outcome.DECLINED,
                reason=DeclineReason.LEFT,
                token=token,
                ended_at=now,
                left_at=now,
            )
        if speculation.generate_at is None and speculation.left_at is None:
            Speculation.objects.filter(pk=speculation.pk).update(left_at=now)
        if speculation.job is not None:
            jobs.cancel_job(job=speculation.job, reason="Left Review.", only_if_unconfirmed=True)
        speculation.refresh_from_db()
        return speculation


def confirmed_backlog() -> int:
    """Confirmed renders waiting or running: the load speculation must never delay."""
    return JobPanel.objects.filter(
        job__confirmed=True,
        job__state__in=LIVE_STATES,
        state__in=[PanelState.PENDING, PanelState.RENDERING],
        hold__state=Hold.State.PENDING,
    ).count()


def _invalidate(live: Speculation) -> None:
    """Ends an older speculation, unless its job was confirmed since it was read.

    The job row is locked first (as confirm_job does, whose receiver marks the
    speculation a hit), then the speculation row: one order, no deadlock.
    """
    assert live.job is not None  # a live speculation has its job
    job = jobs.cancel_job(
        job=live.job, reason="Replaced by a newer speculation.", only_if_unconfirmed=True
    )
    if job.confirmed:
        return  # Generate attached to it meanwhile: a hit, not ours to end
    Speculation.objects.filter(
        pk=live.pk, outcome__in=[Outcome.LIVE, Outcome.ABANDONED, Outcome.EXPIRED]
    ).update(outcome=Outcome.INVALIDATED, ended_at=timezone.now())


def _declined(user: User, storyboard: Storyboard, reason: DeclineReason, token: str) -> Speculation:
    return Speculation.objects.create(
        user=user,
        storyboard=storyboard,
        version=storyboard.version,
        outcome=Outcome.DECLINED,
        reason=reason,
        ended_at=timezone.now(),
        token=token,
    )
