"""Which page builds a comic keeps: one row per content key whose files are in storage."""

from django.db import models

from mangagen.storyboards.models import Storyboard


class PageBuild(models.Model):
    """A content key of a comic with files under `pages/<storyboard>/<key>/`.

    Written after each file built under the key, so every key with files has a
    row; a comic keeps the files of its PAGE_BUILDS_KEPT most recently built
    keys (mangagen/pages/builds.py) and the older ones go.
    """

    storyboard = models.ForeignKey(Storyboard, on_delete=models.CASCADE, related_name="page_builds")
    key = models.CharField(max_length=64)
    built_at = models.DateTimeField()

    class Meta:
        ordering = ["-built_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["storyboard", "key"], name="mangagen_pagebuild_one_per_key"
            ),
        ]

    def __str__(self) -> str:
        return f"pages {self.key} of storyboard #{self.storyboard_id}"
