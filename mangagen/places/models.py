"""A comic's places: where its panels happen, each with a description and an optional
reference picture. A panel set in a place has the place's description (and its
picture's hash) in its art hash."""

import secrets

from django.db import models

from mangagen.storyboards import limits
from mangagen.storyboards.models import Storyboard


def _picture_path(instance, filename: str) -> str:
    token = secrets.token_hex(8)  # unguessable, though the view checks the owner anyway
    return f"places/{instance.storyboard_id}/{instance.picture_hash[:16]}-{token}.png"


class Place(models.Model):
    storyboard = models.ForeignKey(Storyboard, on_delete=models.CASCADE, related_name="places")
    position = models.PositiveSmallIntegerField()
    name = models.CharField(max_length=limits.MAX_NAME)
    description = models.CharField(max_length=limits.MAX_PLACE_DESCRIPTION, blank=True)
    picture = models.FileField(upload_to=_picture_path, blank=True)
    picture_hash = models.CharField(
        max_length=64, blank=True, help_text="Part of the art hash of the panels set here."
    )
    picture_bytes = models.PositiveIntegerField(
        default=0, help_text="The size of its picture (PICTURE_BYTES_PER_PERSON counts it)."
    )

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(
                fields=["storyboard", "name"], name="mangagen_place_unique_name"
            ),
        ]

    def __str__(self) -> str:
        return self.name
