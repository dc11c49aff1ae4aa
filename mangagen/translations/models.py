"""A comic's lettering in another language (docs/api.md, "Translations")."""

from django.db import models

from mangagen.storyboards.models import Storyboard


class Translation(models.Model):
    """The title, dialogue lines and captions of one comic in one language.

    `lines` holds each translated line with where it was and the original text
    it translates (see matching.py), so an edit of the original keeps the line
    and flags it stale. Never anything of the art: no render, hold or hash.
    """

    storyboard = models.ForeignKey(
        Storyboard, on_delete=models.CASCADE, related_name="translations"
    )
    language = models.CharField(max_length=16, help_text="A code of lettering/languages.py.")
    lines = models.JSONField(
        default=list,
        blank=True,
        help_text='[{"slot", "panel", "line", "text", "source", "drafted"?, "orphan"?}]',
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["language"]
        constraints = [
            models.UniqueConstraint(
                fields=["storyboard", "language"], name="mangagen_translation_one_per_language"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.language} translation of storyboard #{self.storyboard_id}"
