"""A rough: one draw of a panel's draft, for the art hash it was asked for.

A panel's rough is the newest row of its comic for its current art hash: drawing one
again (another seed) adds a row, and a text-only edit, which keeps the art hash, keeps
the rough. Rows stay after they are superseded (what roughs cost the operator is
counted from them); their pictures go (retention.py).
"""

import secrets

from django.db import models

from mangagen.storyboards.models import Storyboard


class RoughState(models.TextChoices):
    """What the API says of a rough (docs/api.md, "Rough pages")."""

    QUEUED = "queued"  # asked for; no worker has it yet
    DRAWING = "drawing"  # a worker has it: waiting for the pool's room, or drawing
    READY = "ready"
    FAILED = "failed"


LIVE_STATES = (RoughState.QUEUED, RoughState.DRAWING)


def _rough_path(instance, filename: str) -> str:
    token = secrets.token_hex(8)  # unguessable, though the view checks the owner anyway
    return f"roughs/{instance.storyboard_id}/{instance.art_hash[:16]}-{token}.png"


class Rough(models.Model):
    storyboard = models.ForeignKey(Storyboard, on_delete=models.CASCADE, related_name="roughs")
    art_hash = models.CharField(max_length=64, help_text="What the picture is drawn from.")
    index = models.PositiveSmallIntegerField(help_text="The panel's index when it was asked for.")
    seed = models.PositiveBigIntegerField(help_text="Its final is drawn with the same seed.")
    state = models.CharField(max_length=10, choices=RoughState.choices, default=RoughState.QUEUED)
    aspect = models.CharField(
        max_length=16, blank=True, help_text="The page cell's shape it was drawn at, W:H."
    )
    image = models.FileField(upload_to=_rough_path, blank=True)
    faces = models.JSONField(
        default=dict, blank=True, help_text="name -> [x, y, r] as fractions, as a render's."
    )
    seconds = models.FloatField(
        null=True, blank=True, help_text="From the worker's start to the picture, waits included."
    )
    gpu_seconds = models.FloatField(
        null=True, blank=True, help_text="What the provider ran for it: cold start and drawing."
    )
    error = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    drawn_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-pk"]
        indexes = [
            models.Index(fields=["storyboard", "art_hash", "-id"]),
            models.Index(fields=["created_at"]),
        ]

    def __str__(self) -> str:
        return f"rough {self.art_hash[:8]} of storyboard #{self.storyboard_id}"

    @property
    def ticket(self) -> str:
        """Its name in the GPU pool's queues."""
        return f"rough:{self.pk}"
