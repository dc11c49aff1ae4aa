"""Starting work while the person reads Review; cheapest gates first, silent when declined.

Gates, in order: speculation enabled → storyboard complete (and the
caller's: the view's 404) → one live speculation per person (a newer one
replaces the older) → the global cap on unconfirmed jobs → shed when the
confirmed backlog is long → a 1-credit hold, in the request. Only then is an
unconfirmed job created and panel one enqueued on the `speculative` queue.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from ledger import errors as ledger_errors
from ledger.models import Hold
from mangagen.jobs import services as jobs
from mangagen.jobs.models import LIVE_STATES, Job, JobPanel, PanelState
from mangagen.storyboards.models import Storyboard

from .models import Outcome, Speculation


def speculate(*, user, storyboard: Storyboard) -> Speculation:
    """Returns a live speculation (its job holds panel one's credit) or a declined one."""
    if not settings.SPECULATION_ENABLED:
        return _declined(user, storyboard, "disabled")
    if not storyboard.complete:
        return _declined(user, storyboard, "incomplete")
    with transaction.atomic():
        # One person's speculations are decided one at a time. NO KEY UPDATE: a plain
        # FOR UPDATE would also block other transactions' foreign-key checks on the
        # user (a Generate in another tab, at its commit) while this one waits to lock
        # that Generate's job: a deadlock.
        get_user_model().objects.select_for_update(no_key=True).get(pk=user.pk)
        storyboard.refresh_from_db()
        for live in Speculation.objects.filter(user=user, outcome=Outcome.LIVE).select_related(
            "job"
        ):
            if (
                live.storyboard_id == storyboard.pk
                and live.version == storyboard.version
                and live.job.live
                and not live.job.confirmed
            ):
                return live  # the same storyboard and version: the same job
            _invalidate(live)
        unconfirmed = Job.objects.filter(confirmed=False, state__in=LIVE_STATES).count()
        if unconfirmed >= settings.SPECULATION_MAX_INFLIGHT:
            return _declined(user, storyboard, "capacity")
        if confirmed_backlog() > settings.SPECULATION_BACKLOG_MAX:
            return _declined(user, storyboard, "busy")
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
            return _declined(user, storyboard, "insufficient_credits")
        except ledger_errors.AccountFlagged:
            return _declined(user, storyboard, "flagged")
        except jobs.StoryboardIncomplete:
            return _declined(user, storyboard, "incomplete")
        except IntegrityError:
            return _declined(user, storyboard, "job_in_progress")
        return Speculation.objects.create(
            user=user, storyboard=storyboard, version=storyboard.version, job=job
        )


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
    job = jobs.cancel_job(
        job=live.job, reason="Replaced by a newer speculation.", only_if_unconfirmed=True
    )
    if job.confirmed:
        return  # Generate attached to it meanwhile: a hit, not ours to end
    Speculation.objects.filter(
        pk=live.pk, outcome__in=[Outcome.LIVE, Outcome.ABANDONED, Outcome.EXPIRED]
    ).update(outcome=Outcome.INVALIDATED, ended_at=timezone.now())


def _declined(user, storyboard: Storyboard, reason: str) -> Speculation:
    return Speculation.objects.create(
        user=user,
        storyboard=storyboard,
        version=storyboard.version,
        outcome=Outcome.DECLINED,
        reason=reason,
        ended_at=timezone.now(),
    )
