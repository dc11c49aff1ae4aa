"""What the daily prune lets go of (mangagen/orchestration/pruning.py names it).

A rough's picture is needed while it is its panel's rough: a newer rough of the same
art hash lets it go at once (kinds.py), and one whose art hash no panel of its comic
has any more goes a day after it was drawn (the person may undo an edit). The rows go
with the other old records, at the retention cut-off; a deleted comic takes its rows
and its folder `roughs/<storyboard>/` with it (mangagen/orchestration/comic_deletion.py).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.core.files.storage import default_storage
from django.db.models import Exists, OuterRef
from django.utils import timezone

from mangagen.storyboards.models import Panel

from .models import Rough

# A rough whose panel changed keeps its picture this long: an edit undone finds it.
PICTURES_KEPT_AFTER_CHANGE = timedelta(days=1)


def prune_roughs(*, before: datetime) -> int:
    """Deletes roughs asked for before `before` (their pictures too), and the pictures of
    roughs no panel is drawn from any more; returns how many rows and files went."""
    old = Rough.objects.filter(created_at__lt=before)
    names = list(old.exclude(image="").values_list("image", flat=True))
    deleted, _ = old.delete()
    orphaned = Rough.objects.filter(
        created_at__lt=timezone.now() - PICTURES_KEPT_AFTER_CHANGE
    ).exclude(image="")
    orphaned = orphaned.exclude(
        Exists(
            Panel.objects.filter(
                storyboard_id=OuterRef("storyboard_id"), art_hash=OuterRef("art_hash")
            )
        )
    )
    gone = list(orphaned.values_list("image", flat=True))
    orphaned.update(image="")
    for name in [*names, *gone]:
        default_storage.delete(name)
    return deleted + len(gone)
