"""A series: numbered chapters (storyboards) sharing a style, a cast and places.

The series keeps no cast of its own: its cast and places are its chapters',
each character as the latest chapter it appears in has it (description,
outfits, sheets in use), so a chapter that redraws a character's sheet
hands that sheet on to the next chapter.
"""

from django.conf import settings
from django.db import models

from mangagen.storyboards import limits
from mangagen.storyboards.models import Style


class Series(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="series"
    )
    title = models.CharField(max_length=limits.MAX_TITLE)
    style = models.CharField(
        max_length=16,
        choices=Style.choices,
        default=Style.MANGA,
        help_text="The style each new chapter starts with.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-pk"]
        verbose_name_plural = "series"

    def __str__(self) -> str:
        return self.title
