"""A storyboard is a person's story, its cast, and the ordered panels to render.

Each panel carries a `content_hash` of everything that affects its image, and
the storyboard a `version` derived from its panels' hashes in order: an edit
to one panel changes that panel's hash and the version, nothing else.
"""

from django.conf import settings
from django.db import models


class Style(models.TextChoices):
    MANGA = "manga", "Manga (black and white, screentone)"
    SHONEN = "shonen", "Shōnen action"
    SHOUJO = "shoujo", "Shōjo romance"
    NOIR = "noir", "Noir"
    CHIBI = "chibi", "Chibi comedy"


class Shot(models.TextChoices):
    ESTABLISHING = "establishing", "Establishing"
    WIDE = "wide", "Wide"
    MEDIUM = "medium", "Medium"
    CLOSE_UP = "close-up", "Close-up"
    EXTREME_CLOSE_UP = "extreme-close-up", "Extreme close-up"
    ACTION = "action", "Action"


class Storyboard(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="storyboards"
    )
    title = models.CharField(max_length=200)
    story = models.TextField(blank=True)
    style = models.CharField(max_length=16, choices=Style.choices, default=Style.MANGA)
    version = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-pk"]
        indexes = [models.Index(fields=["owner", "-updated_at"])]

    def __str__(self) -> str:
        return self.title

    @property
    def complete(self) -> bool:
        panels = list(self.panels.all())
        return bool(panels) and all(p.description.strip() for p in panels)


class Character(models.Model):
    storyboard = models.ForeignKey(Storyboard, on_delete=models.CASCADE, related_name="characters")
    position = models.PositiveSmallIntegerField()
    name = models.CharField(max_length=60)
    description = models.CharField(max_length=500, blank=True)

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
    dialogue = models.JSONField(default=list, help_text='[{"speaker": …, "text": …}]')
    caption = models.CharField(max_length=300, blank=True)
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
