"""Outcomes follow what happens to the job (the studio's signals)."""

from django.dispatch import receiver
from django.utils import timezone

from mangagen.jobs.models import JobState
from mangagen.jobs.signals import job_confirmed, job_ended

from .models import Outcome, Speculation


@receiver(job_confirmed)
def speculation_hit(sender, job, **kwargs):
    Speculation.objects.filter(job=job, outcome=Outcome.LIVE).update(
        outcome=Outcome.HIT, generate_at=timezone.now(), ended_at=timezone.now()
    )


@receiver(job_ended)
def speculation_ended(sender, job, state, reason, **kwargs):
    if job.confirmed:
        return  # a hit stays a hit, however the job ends
    outcome = Outcome.EXPIRED if state == JobState.EXPIRED else Outcome.ABANDONED
    Speculation.objects.filter(job=job, outcome=Outcome.LIVE).update(
        outcome=outcome, ended_at=timezone.now()
    )
