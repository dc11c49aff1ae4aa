"""PICTURE_BYTES_PER_PERSON: the bytes of pictures one person may keep (their sheets,
their places' pictures and their library's copies), counted across the comic's data.
Counted, not locked, as the other caps are (mangagen/kernel/quotas.py); a refused
change changes nothing."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Q, Sum
from django.utils.module_loading import import_string
from django.utils.translation import gettext

from mangagen.library.models import CastSheet, SavedPlace
from mangagen.places.models import Place

from .errors import Refused
from .models import CharacterSheet, SheetSource, UploadProblem


def stored_picture_bytes(*, owner_id: int) -> int:
    """The bytes of the pictures PICTURE_BYTES_PER_PERSON counts for one person: their
    own sheet pictures, copies of sheets into another comic (rendered ones included: a
    rendered sheet with no hold of its own is a copy, and copies cost nothing), their
    places' pictures, and their library's copies; and what the apps above count through
    settings PICTURE_COUNTERS (touch-up masks, reading links' snapshots). A paid
    render's own picture is bounded by its price, and page builds are a cache of a few
    versions per comic (docs/bounds.md), not here."""

    def total(rows, field: str) -> int:
        return rows.aggregate(total=Sum(field))["total"] or 0

    sheets = CharacterSheet.objects.filter(storyboard__owner_id=owner_id).exclude(image="")
    free = Q(source=SheetSource.UPLOADED) | Q(hold__isnull=True)
    places = Place.objects.filter(storyboard__owner_id=owner_id).exclude(picture="")
    saved = SavedPlace.objects.filter(owner_id=owner_id).exclude(picture="")
    return (
        total(sheets.filter(free), "bytes")
        + total(places, "picture_bytes")
        + total(CastSheet.objects.filter(member__owner_id=owner_id), "bytes")
        + total(saved, "picture_bytes")
        + sum(import_string(name)(owner_id=owner_id) for name in settings.PICTURE_COUNTERS)
    )


def check_picture_bytes(*, owner_id: int, adding: int, freeing: int = 0) -> None:
    """Raises Refused (`sheet_uploads_full`, 400) when the person's stored pictures
    (stored_picture_bytes), less the `freeing` bytes the same change lets go, plus the
    `adding` bytes it stores, would pass PICTURE_BYTES_PER_PERSON; then the caller
    changes nothing. Counted, not locked, as the other caps are."""
    cap = settings.PICTURE_BYTES_PER_PERSON
    stored = stored_picture_bytes(owner_id=owner_id)
    if stored - freeing + adding > cap:
        raise Refused(
            UploadProblem.UPLOADS_FULL,
            gettext(
                "Your pictures (sheets, places and the copies in your library and comics) "
                "would take more than %(mb)s MB in all; delete pictures you no longer use, "
                "then try again."
            )
            % {"mb": cap // (1024 * 1024)},
            extra={"budget": "PICTURE_BYTES_PER_PERSON", "limit_bytes": cap},
        )
