"""Outcomes follow what happens to the job (the studio's signals); each decision and
outcome is counted for /metrics once its transaction commits."""

from datetime import timedelta

from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver
from django.utils import timezone

from mangagen.jobs.models import GenerateOutcome, JobState
from mangagen.jobs.signals import generate_requested, job_confirmed, job_ended
from mangagen.observability.metrics import (
    SpeculationDecision,
    SpeculationOutcome,
    record_speculation,
    record_speculation_outcome,
    speculations,
)

from .models import DeclineReason, Outcome, Speculation

# Every decline reason on the dashboard from the start, at zero, in every process.
for _reason in DeclineReason:
    speculations.labels(decision=SpeculationDecision.DECLINED, reason=_reason)


@receiver(post_save, sender=Speculation)
def speculation_decided(sender, instance, created, **kwargs):
    """Counts each ask's decision: a speculation started, or declined and why."""
    if not created:
        return
    if instance.outcome == Outcome.DECLINED:
        decision, reason = SpeculationDecision.DECLINED, instance.reason
    else:
        decision, reason = SpeculationDecision.STARTED, ""
    transaction.on_commit(lambda: record_speculation(decision=decision, reason=reason))


def _count_outcome(outcome: SpeculationOutcome, ended: int) -> None:
    if ended:
        transaction.on_commit(lambda: record_speculation_outcome(outcome, ended))


@receiver(job_confirmed)
def speculation_hit(sender, job, **kwargs):
    hits = Speculation.objects.filter(job=job, outcome=Outcome.LIVE).update(
        outcome=Outcome.HIT, generate_at=timezone.now(), ended_at=timezone.now()
    )
    _count_outcome(SpeculationOutcome.ATTACHED, hits)


@receiver(generate_requested)
def review_visit_ended_by_generate(sender, user, storyboard, how, **kwargs):
    """The dwell on Review of this visit ends here (a hit's was set on confirmation)."""
    if how == GenerateOutcome.ATTACHED:
        return
    Speculation.objects.filter(
        pk__in=Speculation.objects.filter(
            user=user,
            storyboard=storyboard,
            generate_at__isnull=True,
            left_at__isnull=True,
            created_at__gte=timezone.now() - timedelta(hours=1),
        )
        .order_by("-pk")
        .values("pk")[:1]
    ).update(generate_at=timezone.now())


@receiver(job_ended)
def speculation_ended(sender, job, state, reason, **kwargs):
    if job.confirmed:
        return  # a hit stays a hit, however the job ends
    outcome = Outcome.EXPIRED if state == JobState.EXPIRED else Outcome.ABANDONED
    ended = Speculation.objects.filter(job=job, outcome=Outcome.LIVE).update(
        outcome=outcome, ended_at=timezone.now()
    )
    _count_outcome(
        SpeculationOutcome.EXPIRED if outcome == Outcome.EXPIRED else SpeculationOutcome.ABANDONED,
        ended,
    )
