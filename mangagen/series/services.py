"""Writes to series: make one, rename it, end it, and start its next chapter.

A new chapter is a storyboard numbered after the last, in the series' style and the
last chapter's language, that
starts with the series' cast and places (see selectors.series_cast): each character
with their latest description, outfits and sheets in use — the same sheets, under the
same hashes, so nothing is rendered or paid again — and each place with its picture.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import F
from django.utils.translation import gettext

from mangagen.characters.services import add_character
from mangagen.kernel import quotas, storage
from mangagen.places.services import add_place_copy
from mangagen.storyboards import limits
from mangagen.storyboards.lock_objects import lock_storyboard
from mangagen.storyboards.models import Storyboard, Style
from mangagen.storyboards.rehashing import rehash_storyboard
from mangagen.storyboards.services import check_storyboards, create_storyboard

from .lock_objects import lock_series
from .models import Series
from .selectors import series_cast


def check_series(*, owner) -> None:
    """Raises LimitReached when `owner` already has limits.MAX_SERIES series."""
    if Series.objects.filter(owner=owner).count() >= limits.MAX_SERIES:
        raise quotas.LimitReached(
            quotas.Limit.SERIES,
            gettext(
                "You have %(cap)s series, the most one account may keep; "
                "delete one to start another."
            )
            % {"cap": limits.MAX_SERIES},
        )


@transaction.atomic
def create_series(*, owner, title: str, style: str = Style.MANGA) -> Series:
    """Raises LimitReached past limits.MAX_SERIES series."""
    check_series(owner=owner)
    return Series.objects.create(owner=owner, title=title, style=style)


@transaction.atomic
def update_series(*, series: Series, title: str | None = None, style: str | None = None) -> Series:
    """A new style is the one later chapters start with; chapters made keep theirs."""
    if title is not None:
        series.title = title
    if style is not None:
        series.style = style
    series.save()
    return series


@transaction.atomic
def end_series(*, series: Series) -> None:
    """Deletes the series; its chapters stay, as standalone comics (nothing drawn is lost)."""
    Storyboard.objects.filter(series=series).update(series=None, chapter=None)
    series.delete()


def start_chapter(*, series: Series, story: str, title: str = "") -> Storyboard:
    """The series' next chapter, with the series' style, cast and places, in the language
    of the chapter before it.

    Raises LimitReached past MAX_STORYBOARDS_PER_PERSON, or Refused (UPLOADS_FULL) when
    the copies of the series' sheets and places' pictures would pass
    PICTURE_BYTES_PER_PERSON
    (nothing is made, and no copied file is left in the storage).
    """
    check_storyboards(owner=series.owner)
    with storage.deleted_if_raised() as saved, transaction.atomic():
        series = lock_series(pk=series.pk)
        before = series.chapters.order_by(F("chapter").desc(nulls_last=True), "-pk").first()
        number = (before.chapter or 0) + 1 if before else 1
        cast = series_cast(series=series)
        title = title or f"{series.title} — Chapter {number}"[: limits.MAX_TITLE]
        storyboard = create_storyboard(
            owner=series.owner,
            title=title,
            story=story,
            style=series.style,
            # The series' language: the chapter before's (the first is guessed).
            language=before.language if before else None,
        )
        storyboard = lock_storyboard(pk=storyboard.pk)
        storyboard.series, storyboard.chapter = series, number
        storyboard.save(update_fields=["series", "chapter"])
        for carried in cast.characters[: limits.MAX_CHARACTERS]:
            character = carried.character
            add_character(
                storyboard=storyboard,
                name=character.name,
                description=character.description,
                outfits=character.outfits,
                sheets={o: (sheet, sheet.image) for o, sheet in carried.sheets.items()},
                saved=saved,
            )
        for kept in cast.places[: limits.MAX_PLACES]:
            add_place_copy(storyboard=storyboard, of=kept.place, saved=saved)
        rehash_storyboard(storyboard=storyboard)
        series.save(update_fields=["updated_at"])
    return storyboard
