"""A storyboard is a person's story, its cast, the ordered panels, and the art it keeps.

Each panel carries an `art_hash` of what its picture depends on and a
`content_hash` of everything (art plus lettering); the storyboard a `version`
derived from its panels' content hashes in order. A delivered render is kept
on the storyboard under its art hash (`KeptArt`), so it outlives the job that
made it and any text edit.
"""

import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

# Defined once, with the lettering that draws each style; the API and the drafters use it
# from here.
from mangagen.lettering.styles import BalloonStyle  # noqa: F401

from . import limits


class Style(models.TextChoices):
    MANGA = "manga", _("Manga (black and white, screentone)")
    SHONEN = "shonen", _("Shōnen action")
    SHOUJO = "shoujo", _("Shōjo romance")
    NOIR = "noir", _("Noir")
    CHIBI = "chibi", _("Chibi comedy")


class Shot(models.TextChoices):
    ESTABLISHING = "establishing", _("Establishing")
    WIDE = "wide", _("Wide")
    MEDIUM = "medium", _("Medium")
    CLOSE_UP = "close-up", _("Close-up")
    EXTREME_CLOSE_UP = "extreme-close-up", _("Extreme close-up")
    ACTION = "action", _("Action")


class Position(models.TextChoices):
    """Where a panel's blocking places a character present."""

    LEFT = "left", _("Left")
    CENTER = "center", _("Center")
    RIGHT = "right", _("Right")


class ReadingDirection(models.TextChoices):
    RTL = "rtl", _("Right to left (manga)")
    LTR = "ltr", _("Left to right")


class PageFormat(models.TextChoices):
    MANGA = "manga", _("Printed pages")
    WEBTOON = "webtoon", _("Webtoon strip")


class PageTemplate(models.TextChoices):
    """How a page's panels are set in tiers; `auto` lets the layout engine choose by shot."""

    AUTO = "auto", _("Chosen from the shots")
    SPLASH = "splash", _("Splash: one panel, the whole page")
    TIERS = "tiers", _("One panel per tier")
    PAIRS = "pairs", _("Two panels per tier")
    WIDE_TOP = "wide-top", _("A wide tier, then pairs")
    GRID = "grid", _("Three panels per tier")


class ExportFormat(models.TextChoices):
    PDF = "pdf", _("PDF (print)")
    CBZ = "cbz", _("CBZ (comic reader apps)")
    WEBTOON = "webtoon", _("Webtoon strip (PNG)")


MANGA_STYLES = ("manga", "shonen", "shoujo", "chibi")


class Storyboard(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="storyboards"
    )
    title = models.CharField(max_length=limits.MAX_TITLE)
    story = models.TextField(blank=True)
    style = models.CharField(max_length=16, choices=Style.choices, default=Style.MANGA)
    language = models.CharField(
        max_length=16,
        default="en",
        help_text="The original's language, a code of lettering/languages.py: how it is set.",
    )
    version = models.CharField(max_length=64, blank=True)
    direction = models.CharField(
        max_length=3,
        choices=ReadingDirection.choices,
        blank=True,
        help_text="Blank: right to left for manga styles, left to right otherwise.",
    )
    page_format = models.CharField(
        max_length=8, choices=PageFormat.choices, default=PageFormat.MANGA
    )
    page_breaks = models.JSONField(
        default=list, blank=True, help_text="Panel indices that start a new page (the person's)."
    )
    page_templates = models.JSONField(
        default=dict,
        blank=True,
        help_text='{"<page\'s first panel index>": "<template>"}, the person\'s picks.',
    )
    series = models.ForeignKey(
        "mangagen.Series",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="chapters",
        help_text="The series this comic is a chapter of (none: a standalone comic).",
    )
    chapter = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Its number in the series, from 1."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-pk"]
        indexes = [models.Index(fields=["owner", "-updated_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["series", "chapter"], name="mangagen_storyboard_unique_chapter"
            ),
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def reading_direction(self) -> str:
        if self.direction:
            return self.direction
        return ReadingDirection.RTL if self.style in MANGA_STYLES else ReadingDirection.LTR

    @property
    def complete(self) -> bool:
        return panels_complete(list(self.panels.all()))


def panels_complete(panels: "list[Panel]") -> bool:
    """The one rule for a storyboard ready to render: at least one panel, and
    every panel says what it shows."""
    return bool(panels) and all(p.description.strip() for p in panels)


class Character(models.Model):
    storyboard = models.ForeignKey(Storyboard, on_delete=models.CASCADE, related_name="characters")
    position = models.PositiveSmallIntegerField()
    name = models.CharField(max_length=limits.MAX_NAME)
    description = models.CharField(max_length=limits.MAX_CHARACTER_DESCRIPTION, blank=True)
    outfits = models.JSONField(
        default=list, blank=True, help_text='Named outfits: [{"name": …, "description": …}].'
    )

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(
                fields=["storyboard", "name"], name="mangagen_character_unique_name"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Panel(models.Model):
    storyboard = models.ForeignKey(Storyboard, on_delete=models.CASCADE, related_name="panels")
    index = models.PositiveSmallIntegerField(help_text="1-based reading order.")
    description = models.TextField(blank=True)
    shot = models.CharField(max_length=20, choices=Shot.choices, default=Shot.MEDIUM)
    characters = models.JSONField(default=list, help_text="Names of the characters present.")
    dialogue = models.JSONField(
        default=list,
        help_text='[{"speaker": …, "text": …, "style"?: …, "place"?: {"x", "y", "tail"?}}]',
    )
    caption = models.CharField(max_length=limits.MAX_CAPTION, blank=True)
    art_hash = models.CharField(max_length=64, blank=True)
    sheets = models.JSONField(
        default=dict, blank=True, help_text="name -> hash of the sheets its art hash covers."
    )
    place = models.CharField(
        max_length=limits.MAX_NAME, blank=True, help_text="The name of the place it is set in."
    )
    outfits = models.JSONField(
        default=dict, blank=True, help_text="name -> the outfit that character wears here."
    )
    blocking = models.JSONField(
        default=dict,
        blank=True,
        help_text="name -> where that character stands (left|center|right).",
    )
    art_inputs = models.JSONField(
        default=dict,
        blank=True,
        help_text="The place and outfits its art hash covers (descriptions, picture and sheet "
        "hashes), as the renderer is given them.",
    )
    sfx = models.JSONField(
        default=list,
        blank=True,
        help_text='Sound effects lettered as art: [{"text", "x", "y", "size"?, "angle"?}].',
    )
    content_hash = models.CharField(max_length=64)

    class Meta:
        ordering = ["index"]
        constraints = [
            models.UniqueConstraint(
                fields=["storyboard", "index"], name="mangagen_panel_unique_index"
            ),
        ]

    def __str__(self) -> str:
        return f"panel {self.index}"


def _kept_path(instance, filename: str) -> str:
    token = secrets.token_hex(8)  # unguessable, though the view checks the owner anyway
    return f"renders/kept/{instance.storyboard_id}/{instance.art_hash[:16]}-{token}.png"


class KeptArt(models.Model):
    """A delivered render, kept by the comic under the art hash it was drawn for.

    Every take is kept; a panel shows the most recently chosen take of its
    current art hash (`chosen_at`), so going back to an older one costs nothing.
    """

    storyboard = models.ForeignKey(Storyboard, on_delete=models.CASCADE, related_name="kept_art")
    art_hash = models.CharField(max_length=64)
    image = models.FileField(upload_to=_kept_path)
    faces = models.JSONField(
        default=dict, blank=True, help_text="name -> [x, y, r] as fractions of the width."
    )
    source = models.ForeignKey(
        "mangagen.JobPanel", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    attempt = models.PositiveSmallIntegerField(default=1)
    aspect = models.CharField(
        max_length=16, blank=True, help_text="The page cell's shape it was drawn at, W:H."
    )
    fitted_to = models.CharField(
        max_length=16,
        blank=True,
        help_text="A cell's shape the person chose to fit it to, as it is, rather than redraw.",
    )
    set_aside = models.BooleanField(
        default=False,
        help_text="Set aside to be drawn again for its cell's new shape (choosing it again "
        "brings it back).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    chosen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-chosen_at", "-pk"]
        indexes = [models.Index(fields=["storyboard", "art_hash", "-chosen_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "attempt"], name="mangagen_keptart_one_per_render"
            ),
        ]

    def __str__(self) -> str:
        return f"kept art {self.art_hash[:8]} of storyboard #{self.storyboard_id}"
