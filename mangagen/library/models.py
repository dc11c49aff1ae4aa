"""A person's library: characters (the cast) and places kept across comics.

A cast member is a character saved from a comic with its description, its
outfits and the sheets it had in use; adding it to another comic brings the
same sheets (the same hashes: nothing is rendered or paid again). The
library keeps its own copy of each picture, so deleting the comic it came
from loses nothing.
"""

import secrets

from django.conf import settings
from django.db import models

from mangagen.characters.models import SheetSource
from mangagen.storyboards import limits


def _sheet_path(instance, filename: str) -> str:
    token = secrets.token_hex(8)
    return f"library/{instance.member.owner_id}/cast/{instance.hash[:16]}-{token}.png"


def _picture_path(instance, filename: str) -> str:
    token = secrets.token_hex(8)
    return f"library/{instance.owner_id}/places/{instance.picture_hash[:16]}-{token}.png"


class Entry(models.Model):
    """What every entry of a person's library has."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=limits.MAX_NAME)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
        ordering = ["name", "pk"]

    def __str__(self) -> str:
        return self.name


class CastMember(Entry):
    description = models.CharField(max_length=limits.MAX_CHARACTER_DESCRIPTION, blank=True)
    outfits = models.JSONField(
        default=list, blank=True, help_text='[{"name": …, "description": …}]'
    )


class CastSheet(models.Model):
    """A sheet a cast member had in use: their usual look's (`outfit` blank) or an outfit's.

    What a comic's sheet needs to be the same sheet there: its hash, and what a
    rendered one was made from (description, outfit's description, style), by
    which it goes stale.
    """

    member = models.ForeignKey(CastMember, on_delete=models.CASCADE, related_name="sheets")
    outfit = models.CharField(max_length=limits.MAX_NAME, blank=True)
    source = models.CharField(max_length=10, choices=SheetSource.choices)
    description = models.CharField(max_length=limits.MAX_CHARACTER_DESCRIPTION, blank=True)
    outfit_description = models.CharField(max_length=limits.MAX_CHARACTER_DESCRIPTION, blank=True)
    style = models.CharField(max_length=16, blank=True)
    hash = models.CharField(max_length=64)
    image = models.FileField(upload_to=_sheet_path)
    bytes = models.PositiveIntegerField(
        default=0, help_text="The size of its picture (PICTURE_BYTES_PER_PERSON counts it)."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["member", "outfit"], name="mangagen_castsheet_one_per_look"
            ),
        ]

    def __str__(self) -> str:
        return f"sheet of cast member #{self.member_id} ({self.outfit or 'usual look'})"


class SavedPlace(Entry):
    description = models.CharField(max_length=limits.MAX_PLACE_DESCRIPTION, blank=True)
    picture = models.FileField(upload_to=_picture_path, blank=True)
    picture_hash = models.CharField(max_length=64, blank=True)
    picture_bytes = models.PositiveIntegerField(
        default=0, help_text="The size of its picture (PICTURE_BYTES_PER_PERSON counts it)."
    )
