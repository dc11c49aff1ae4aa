"""A reading link: one published snapshot of a comic or of a series."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from mangagen.series.models import Series
from mangagen.storyboards.models import Storyboard


class ReadingLink(models.Model):
    """The link of one comic or one series (exactly one of them), at its `version`.

    `manifest` is the snapshot the public reader shows: titles, languages,
    chapters, and each page's file (under `folder` in the media storage) with
    its ETag per language. Publishing again replaces the manifest and the
    folder and bumps the version; the token stays. Stopping sharing deletes
    the row (a later publish makes a new token).
    """

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reading_links"
    )
    storyboard = models.OneToOneField(
        Storyboard, null=True, blank=True, on_delete=models.CASCADE, related_name="reading_link"
    )
    series = models.OneToOneField(
        Series, null=True, blank=True, on_delete=models.CASCADE, related_name="reading_link"
    )
    token = models.CharField(max_length=64)
    # SHA-256 of the token: the row is found by it, so the lookup's timing says nothing
    # about how much of a guessed token is right (the token is then compared in
    # constant time).
    digest = models.CharField(max_length=64, unique=True)
    version = models.PositiveIntegerField(default=1)
    published_at = models.DateTimeField()
    folder = models.CharField(max_length=128)
    manifest = models.JSONField(default=dict)
    allow_download = models.BooleanField(default=False)
    indexable = models.BooleanField(default=False)
    pen_name = models.CharField(max_length=80, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(storyboard__isnull=False, series__isnull=True)
                | Q(storyboard__isnull=True, series__isnull=False),
                name="mangagen_readinglink_one_comic_or_series",
            ),
        ]

    def __str__(self) -> str:
        what = (
            f"storyboard #{self.storyboard_id}"
            if self.storyboard_id
            else f"series #{self.series_id}"
        )
        return f"reading link of {what} (v{self.version})"
