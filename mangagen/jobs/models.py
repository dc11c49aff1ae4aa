"""A render job: one storyboard version, rendered panel by panel, paid per render.

The job is a state machine stored here; no worker waits for a person. Each
render is a short task; every decision is a service call that moves the
state and enqueues the next render on commit.
"""

import secrets
from enum import StrEnum

from django.conf import settings
from django.db import models
from django.db.models import Q

from ledger.models import Hold
from mangagen.observability.metrics import RenderOutcome
from mangagen.storyboards.models import Storyboard


class JobState(models.TextChoices):
    QUEUED = "queued"
    RENDERING = "rendering"
    AWAITING_DECISION = "awaiting_decision"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    EXPIRED = "expired"
    FAILED = "failed"


LIVE_STATES = (JobState.QUEUED, JobState.RENDERING, JobState.AWAITING_DECISION)


class PanelState(models.TextChoices):
    PENDING = "pending"
    RENDERING = "rendering"
    READY = "ready"  # rendered, not yet shown (an unconfirmed job's render)
    DELIVERED = "delivered"
    APPROVED = "approved"
    FAILED = "failed"


SHOWN_STATES = (PanelState.DELIVERED, PanelState.APPROVED)


class GenerateOutcome(StrEnum):
    """What Generate did (services.generate, the generate_requested signal)."""

    CREATED = "created"  # a new job started
    ATTACHED = "attached"  # a live speculation was confirmed
    EXISTING = "existing"  # the live confirmed job of this version, as it was


class JobKind(models.TextChoices):
    """What a job was started for: Generate (or a speculation of it), or one touch-up of a
    panel whose comic had no job under way (it ends once the touched-up take is shown)."""

    RENDER = "render"
    TOUCHUP = "touchup"


class Job(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="jobs"
    )
    storyboard = models.ForeignKey(Storyboard, on_delete=models.CASCADE, related_name="jobs")
    version = models.CharField(max_length=64)
    style = models.CharField(max_length=16)
    cast = models.JSONField(default=dict, help_text="Character descriptions at the start.")
    confirmed = models.BooleanField(default=True)
    kind = models.CharField(max_length=12, choices=JobKind.choices, default=JobKind.RENDER)
    state = models.CharField(max_length=20, choices=JobState.choices, default=JobState.QUEUED)
    current_index = models.PositiveSmallIntegerField(default=1)
    last_seq = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    confirm_by = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    end_reason = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-pk"]
        constraints = [
            # A double click, or two tabs, can never start two live jobs.
            models.UniqueConstraint(
                fields=["storyboard"],
                condition=Q(state__in=["queued", "rendering", "awaiting_decision"]),
                name="mangagen_one_live_job_per_storyboard",
            ),
            models.CheckConstraint(
                condition=Q(confirmed=True) | Q(confirm_by__isnull=False),
                name="mangagen_unconfirmed_job_has_deadline",
            ),
        ]
        indexes = [
            models.Index(fields=["state", "expires_at"]),
            models.Index(fields=["state", "confirm_by"]),
        ]

    def __str__(self) -> str:
        return f"job #{self.pk} ({self.state})"

    @property
    def live(self) -> bool:
        return self.state in LIVE_STATES


def _image_path(instance, filename: str) -> str:
    token = secrets.token_hex(8)  # unguessable, though the view checks the owner anyway
    return f"renders/{instance.job_id}/{instance.index:02d}-{instance.attempts}-{token}.png"


class JobPanel(models.Model):
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="panels")
    index = models.PositiveSmallIntegerField()
    content_hash = models.CharField(max_length=64)
    art_hash = models.CharField(max_length=64, blank=True)
    spec = models.JSONField(help_text="The panel as it was when the job started.")
    state = models.CharField(max_length=12, choices=PanelState.choices, default=PanelState.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Renders started.")
    lookahead = models.BooleanField(
        default=False, help_text="The current render was started ahead, before it was reached."
    )
    hold = models.ForeignKey(
        Hold, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    image = models.FileField(upload_to=_image_path, blank=True)
    faces = models.JSONField(
        default=dict, blank=True, help_text="Where the renderer drew faces, for the lettering."
    )
    cold = models.BooleanField(null=True)
    render_seconds = models.FloatField(null=True, blank=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    render_started_at = models.DateTimeField(null=True, blank=True)
    rendered_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)
    from_rough = models.BooleanField(
        default=False, help_text="Its render was drawn from the panel's rough (composition kept)."
    )
    aspect = models.CharField(
        max_length=16, blank=True, help_text="The page cell's shape its render was drawn at, W:H."
    )
    judge_check = models.JSONField(
        null=True,
        blank=True,
        help_text="What the judge said of the render kept (score, redraws, reason); "
        "null when unchecked.",
    )

    class Meta:
        ordering = ["index"]
        constraints = [
            models.UniqueConstraint(fields=["job", "index"], name="mangagen_jobpanel_unique_index"),
        ]

    def __str__(self) -> str:
        return f"job #{self.job_id} panel {self.index} ({self.state})"

    @property
    def shown(self) -> bool:
        return self.state in SHOWN_STATES


class JobEvent(models.Model):
    """The per-job, append-only event log; `seq` counts 1, 2, 3… with no gaps."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=32)
    data = models.JSONField(default=dict)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["job", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["job", "seq"], name="mangagen_jobevent_unique_seq")
        ]

    def __str__(self) -> str:
        return f"job #{self.job_id} event {self.seq} {self.type}"

    def as_message(self) -> dict:
        return {"seq": self.seq, "type": self.type, "at": self.at.isoformat(), "data": self.data}


# How an attempt that ran ended, as kept on its row: the task's other answers (stale,
# duplicate) are about a copy of the attempt, not the attempt. The values are
# RenderOutcome's, the one contract perform_render and `mangagen_renders_total` share.
ATTEMPT_ENDINGS = (
    RenderOutcome.DELIVERED,
    RenderOutcome.READY,
    RenderOutcome.FAILED,
    RenderOutcome.WITHDRAWN,
    RenderOutcome.CANCELLED_AT_PROVIDER,
    RenderOutcome.DISCARDED,
)


class RenderAttempt(models.Model):
    """One render attempt of a job's panel and the hold it is paid from, recorded when it
    is queued: what the speculation metrics count (the panel row keeps only its latest).
    Once it ends: how (`outcome`), what its phases took, and, when it was cancelled at
    the provider, about how many seconds of the provider's time that spared."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="render_attempts")
    index = models.PositiveSmallIntegerField()
    attempt = models.PositiveSmallIntegerField()
    hold = models.OneToOneField(Hold, on_delete=models.PROTECT, related_name="+")
    outcome = models.CharField(
        max_length=24,
        choices=[(o.value, o.name.replace("_", " ").title()) for o in ATTEMPT_ENDINGS],
        blank=True,
    )
    phases = models.JSONField(default=dict, blank=True)
    provider_seconds_saved = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["job", "index", "attempt"], name="mangagen_one_row_per_render_attempt"
            ),
        ]

    def __str__(self) -> str:
        return f"job #{self.job_id} panel {self.index} attempt {self.attempt}"


def _mask_path(instance, filename: str) -> str:
    # In the job's own folder, with its renders: the ended job's prune and the comic's
    # deletion let it go with them (renders/touchups/<job>/ was visited by neither).
    return mask_path(instance.attempt.job_id, instance.attempt.index, secrets.token_hex(8))


def mask_path(job_id: int, index: int, token: str) -> str:
    """Where a touch-up's mask is stored: the folder of the job it rides on."""
    return f"renders/{job_id}/touchup-{index:02d}-{token}.png"


class TouchUp(models.Model):
    """A render attempt that draws one region of a panel again: what it is drawn over
    (`take`, the panel's current take when it was asked for), the canonical mask
    (regions.py, mangagen/renderers/masks.py: 255 = redraw), and what to draw there. Paid and
    delivered as the attempt it belongs to; its picture is the provider's composited
    into the take outside the mask."""

    attempt = models.OneToOneField(RenderAttempt, on_delete=models.CASCADE, related_name="touchup")
    take = models.ForeignKey(
        "mangagen.KeptArt", null=True, on_delete=models.SET_NULL, related_name="+"
    )
    mask = models.FileField(upload_to=_mask_path)
    mask_bytes = models.PositiveIntegerField(
        default=0, help_text="The stored mask's size: PICTURE_BYTES_PER_PERSON counts it."
    )
    prompt = models.TextField()
    box = models.JSONField(default=list, help_text="The region's bounds: [x, y, w, h] fractions.")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"touch-up of {self.attempt}"
