"""A character sheet: the reference image a character's panels are drawn from.

Every sheet made for a character is a row (a take): the newest is what the
Characters step shows, the newest ready one is the sheet in use. A character
has one such line of sheets for their usual look (`outfit` blank) and one for
each named outfit. A sheet is
keyed by the character's name, not the Character row, since a storyboard
edit replaces its character rows. A rendered sheet is made for a
description and a style and goes stale when either changes; an uploaded one
is the person's own picture and never does.
"""

import secrets

from django.db import models
from django.db.models import Q

from ledger.models import Hold
from mangagen.storyboards import limits
from mangagen.storyboards.models import Storyboard


class SheetState(models.TextChoices):
    """What the API says of a character's sheet (docs/api.md, "Character sheets")."""

    RENDERING = "rendering"
    READY = "ready"
    FAILED = "failed"
    STALE = "stale"  # never stored: a ready rendered sheet whose description or style changed


STORED_STATES = (SheetState.RENDERING, SheetState.READY, SheetState.FAILED)


class SheetSource(models.TextChoices):
    RENDERED = "rendered"
    UPLOADED = "uploaded"


class UploadProblem(models.TextChoices):
    """Why an uploaded reference image was refused (the 400's `error`)."""

    MISSING = "missing_image"
    TOO_LARGE = "file_too_large"
    NOT_AN_IMAGE = "not_an_image"
    UNSUPPORTED = "unsupported_type"
    TOO_SMALL = "image_too_small"
    TOO_BIG = "image_too_big"
    BOMB = "decompression_bomb"
    TRUNCATED = "truncated_image"
    # Past PICTURE_BYTES_PER_PERSON (every stored picture of one person: quotas.py); the
    # code of the days when it bounded uploaded sheets alone, kept for clients.
    UPLOADS_FULL = "sheet_uploads_full"


def _sheet_path(instance, filename: str) -> str:
    token = secrets.token_hex(8)  # unguessable, though the view checks the owner anyway
    return f"sheets/{instance.storyboard_id}/{instance.hash[:16]}-{token}.png"


# What makes a sheet the same sheet as another, copied with it (to another comic, to
# and from the cast library): its source, its hash, and what a rendered one was drawn from.
MADE_FROM = ("source", "description", "outfit_description", "style", "hash")


def made_from(sheet) -> dict[str, str]:
    """The MADE_FROM fields of `sheet` (a CharacterSheet, or the library's CastSheet)."""
    return {field: getattr(sheet, field) for field in MADE_FROM}


class CharacterSheet(models.Model):
    storyboard = models.ForeignKey(Storyboard, on_delete=models.CASCADE, related_name="sheets")
    name = models.CharField(max_length=limits.MAX_NAME, help_text="The character's name.")
    source = models.CharField(max_length=10, choices=SheetSource.choices)
    state = models.CharField(max_length=10, choices=[(s.value, s.label) for s in STORED_STATES])
    description = models.CharField(
        max_length=limits.MAX_CHARACTER_DESCRIPTION,
        blank=True,
        help_text="The description a rendered sheet was made for.",
    )
    style = models.CharField(max_length=16, blank=True)
    outfit = models.CharField(
        max_length=limits.MAX_NAME,
        blank=True,
        help_text="The outfit this sheet shows (blank: the character's usual look).",
    )
    outfit_description = models.CharField(
        max_length=limits.MAX_CHARACTER_DESCRIPTION,
        blank=True,
        help_text="The outfit's description a rendered sheet was made for.",
    )
    hash = models.CharField(max_length=64, help_text="Part of the art hash of the panels.")
    image = models.FileField(upload_to=_sheet_path, blank=True)
    bytes = models.PositiveIntegerField(default=0, help_text="The size of its picture.")
    hold = models.ForeignKey(
        Hold, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    rendered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-pk"]
        indexes = [models.Index(fields=["storyboard", "name", "-id"])]
        constraints = [
            # A double click, or two tabs, can never render two sheets of one character.
            models.UniqueConstraint(
                fields=["storyboard", "name", "outfit"],
                condition=Q(state="rendering"),
                name="mangagen_one_sheet_rendering_per_look",
            ),
            models.CheckConstraint(
                condition=~Q(state="ready") | ~Q(image=""),
                name="mangagen_ready_sheet_has_image",
            ),
        ]

    def __str__(self) -> str:
        return f"sheet of {self.name} ({self.state})"
