"""Every speculation, and how it ended: the records the metrics are computed from."""

from django.conf import settings
from django.db import models

from mangagen.jobs.models import Job
from mangagen.storyboards.models import Storyboard


class Outcome(models.TextChoices):
    LIVE = "live", "Live"
    HIT = "hit", "Hit (Generate attached)"
    ABANDONED = "abandoned", "Abandoned (left Review)"
    EXPIRED = "expired", "Expired (confirm_by passed)"
    INVALIDATED = "invalidated", "Invalidated (replaced)"
    DECLINED = "declined", "Declined (no job)"


class DeclineReason(models.TextChoices):
    """Why no speculation started (the `reason` of a 200 answer). One place for the contract."""

    DISABLED = "disabled", "Speculation is switched off"
    INCOMPLETE = "incomplete", "The storyboard is not complete"
    LEFT = "left", "The person left Review before the answer"
    CAPACITY = "capacity", "Too many speculations in flight"
    BUSY = "busy", "Confirmed work is waiting for the GPU"
    BUDGET = "budget", "Over the person's or the global budget"
    LATE = "late", "Unlikely to finish before Generate"
    INSUFFICIENT_CREDITS = "insufficient_credits", "Not a credit to hold"
    FLAGGED = "flagged", "The account is flagged"
    JOB_IN_PROGRESS = "job_in_progress", "A job of this storyboard is live"
    ENDED = "ended", "A repeated ask names a speculation that has ended"


class Speculation(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    storyboard = models.ForeignKey(Storyboard, on_delete=models.CASCADE, related_name="+")
    version = models.CharField(max_length=64)
    job = models.OneToOneField(
        Job, null=True, blank=True, on_delete=models.CASCADE, related_name="speculation"
    )
    outcome = models.CharField(max_length=12, choices=Outcome.choices, default=Outcome.LIVE)
    reason = models.CharField(max_length=40, blank=True, help_text="Why it was declined.")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    generate_at = models.DateTimeField(
        null=True, blank=True, help_text="When the person clicked Generate (attached or not)."
    )
    left_at = models.DateTimeField(
        null=True, blank=True, help_text="When the person left Review without Generate."
    )
    token = models.CharField(
        max_length=64, blank=True, help_text="Made by the Review page; its beacon names it."
    )
    predicted_seconds = models.FloatField(
        null=True, blank=True, help_text="When panel one was predicted to be done, from the ask."
    )

    class Meta:
        ordering = ["-pk"]
        indexes = [models.Index(fields=["user", "outcome"]), models.Index(fields=["outcome"])]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "token"],
                condition=~models.Q(token=""),
                name="speculation_one_row_per_token",
            ),
            models.CheckConstraint(
                condition=models.Q(outcome=Outcome.DECLINED, job__isnull=True)
                | (~models.Q(outcome=Outcome.DECLINED) & models.Q(job__isnull=False)),
                name="speculation_job_unless_declined",
            ),
        ]

    def __str__(self) -> str:
        return f"speculation #{self.pk} ({self.outcome}{': ' + self.reason if self.reason else ''})"


class DeclinedDaily(models.Model):
    """Declined speculations of one UTC day and reason, counted once their rows are pruned
    (see `speculation/retention.py`); the metrics add these to the rows still kept."""

    day = models.DateField()
    reason = models.CharField(max_length=40, blank=True)
    count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-day", "reason"]
        constraints = [
            models.UniqueConstraint(
                fields=["day", "reason"], name="speculation_declined_daily_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.day}: {self.count} declined ({self.reason or 'no reason'})"
