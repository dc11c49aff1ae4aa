"""Reads about a series: its chapters with their progress, and the cast and places a new
chapter starts with."""

from __future__ import annotations

from dataclasses import dataclass, field

from mangagen.characters.models import CharacterSheet
from mangagen.characters.selectors import sheet_rows_in_use_of_each
from mangagen.places.models import Place
from mangagen.places.selectors import places_of_each
from mangagen.storyboards.models import Character, KeptArt, Storyboard
from mangagen.storyboards.selectors import current_takes_of_each

from .models import Series


def chapters_of(*, series: Series) -> list[Storyboard]:
    """The series' chapters in reading order."""
    chapters = series.chapters.order_by("chapter", "pk")
    return list(chapters.prefetch_related("panels", "translations"))


def _chapters_of_each(series: list[Series], *related: str) -> dict[int, list[Storyboard]]:
    """series pk -> its chapters in reading order (as `chapters_of`), with `related`
    prefetched: one query for the chapters of all `series`, and one for each of `related`."""
    each: dict[int, list[Storyboard]] = {one.pk: [] for one in series}
    chapters = Storyboard.objects.filter(series__in=series).order_by("chapter", "pk")
    for chapter in chapters.prefetch_related(*related):
        assert chapter.series_id is not None  # filtered on it
        each[chapter.series_id].append(chapter)
    return each


def chapter_json(storyboard: Storyboard, *, takes: dict[str, KeptArt]) -> dict:
    """A chapter as the series lists it, with its progress: panels, and panels drawn (kept).
    `takes` is the chapter's `current_takes`."""
    panels = list(storyboard.panels.all())
    return {
        "number": storyboard.chapter,
        "storyboard": storyboard.pk,
        "title": storyboard.title,
        "language": storyboard.language,
        "panels": len(panels),
        "kept": sum(1 for p in panels if p.art_hash in takes),
    }


def series_json(series: Series) -> dict:
    """The series as the API shows it: its chapters with their progress, the languages the
    whole of it downloads in, and its cast and places."""
    return series_json_each(series=[series])[0]


def series_json_each(*, series: list[Series]) -> list[dict]:
    """`series_json` of each of `series`, in their order: the same few queries however many
    series and chapters there are."""
    chapters = _chapters_of_each(series, "panels", "translations", "characters")
    everyone = [chapter for one in series for chapter in chapters[one.pk]]
    takes = current_takes_of_each(storyboards=everyone)
    places = places_of_each(storyboards=everyone)
    # The JSON shows no sheet: the cast is read without them.
    return [
        _series_json(one, chapters[one.pk], takes=takes, cast=_cast(chapters[one.pk], {}, places))
        for one in series
    ]


def _series_json(
    series: Series,
    chapters: list[Storyboard],
    *,
    takes: dict[int, dict[str, KeptArt]],
    cast: SeriesCast,
) -> dict:
    """`series_json` from the series' `chapters` (panels and translations prefetched), the
    current takes of each (storyboard pk -> takes) and its `cast`."""
    listed = [chapter_json(chapter, takes=takes[chapter.pk]) for chapter in chapters]
    drawn = [chapter for chapter, shown in zip(chapters, listed, strict=True) if shown["kept"]]
    return {
        "id": series.pk,
        "title": series.title,
        "style": series.style,
        "chapters": listed,
        "languages": readable_in(drawn),
        "cast": [{"name": c.character.name, "chapter": c.chapter} for c in cast.characters],
        "places": [{"name": p.place.name, "chapter": p.chapter} for p in cast.places],
        "created_at": series.created_at,
        "updated_at": series.updated_at,
    }


def readable_in(chapters: list[Storyboard]) -> list[str]:
    """The languages every one of `chapters` can be read in (its own, or a translation
    into it): what a download of the whole series may take as `?lang=`. Empty when
    `chapters` is."""
    common: set[str] | None = None
    for chapter in chapters:
        own = {chapter.language} | {t.language for t in chapter.translations.all()}
        common = own if common is None else common & own
    return sorted(common or ())


@dataclass(frozen=True)
class CarriedCharacter:
    """A character as the latest chapter they appear in has them, with that chapter's
    sheets in use: outfit ("" for the usual look) -> sheet."""

    character: Character
    chapter: int
    sheets: dict[str, CharacterSheet] = field(default_factory=dict)


@dataclass(frozen=True)
class CarriedPlace:
    place: Place
    chapter: int


@dataclass(frozen=True)
class SeriesCast:
    characters: list[CarriedCharacter]
    places: list[CarriedPlace]


def series_cast(*, series: Series, chapters: list[Storyboard] | None = None) -> SeriesCast:
    """Every character and place of the series' chapters, each as the latest chapter that
    has it (names matched ignoring case), in the order they first appeared.

    `chapters`: the series' chapters in reading order, when already read (their
    characters prefetched, or two queries each); read here otherwise (four queries in all).
    """
    if chapters is None:
        chapters = _chapters_of_each([series], "characters")[series.pk]
    in_use = sheet_rows_in_use_of_each(storyboards=chapters)
    return _cast(chapters, in_use, places_of_each(storyboards=chapters))


def _cast(
    chapters: list[Storyboard],
    in_use: dict[int, dict[tuple[str, str], CharacterSheet]],
    places: dict[int, list[Place]],
) -> SeriesCast:
    """`series_cast` of `chapters`, from their sheets in use and their places (storyboard pk
    -> …); a chapter absent from `in_use` carries its characters without sheets."""
    characters: dict[str, CarriedCharacter] = {}
    carried: dict[str, CarriedPlace] = {}
    for chapter in chapters:
        sheets_in_use = in_use.get(chapter.pk, {})
        for character in chapter.characters.all():
            sheets = {
                outfit: sheet
                for (name, outfit), sheet in sheets_in_use.items()
                if name == character.name
            }
            key = character.name.casefold()
            characters[key] = CarriedCharacter(character, chapter.chapter, sheets)
        for place in places[chapter.pk]:
            carried[place.name.casefold()] = CarriedPlace(place, chapter.chapter)
    return SeriesCast(characters=list(characters.values()), places=list(carried.values()))
