"""Reads about a series: its chapters with their progress, and the cast and places a new
chapter starts with."""

from __future__ import annotations

from dataclasses import dataclass, field

from mangagen.characters.models import CharacterSheet
from mangagen.characters.selectors import sheet_rows_in_use
from mangagen.places.models import Place
from mangagen.places.selectors import places_of
from mangagen.storyboards.models import Character, Storyboard
from mangagen.storyboards.selectors import current_takes

from .models import Series


def chapters_of(*, series: Series) -> list[Storyboard]:
    """The series' chapters in reading order."""
    chapters = series.chapters.order_by("chapter", "pk")
    return list(chapters.prefetch_related("panels", "translations"))


def chapter_json(storyboard: Storyboard) -> dict:
    """A chapter as the series lists it, with its progress: panels, and panels drawn (kept)."""
    panels = list(storyboard.panels.all())
    takes = current_takes(storyboard=storyboard)
    return {
        "number": storyboard.chapter,
        "storyboard": storyboard.pk,
        "title": storyboard.title,
        "language": storyboard.language,
        "panels": len(panels),
        "kept": sum(1 for p in panels if p.art_hash in takes),
    }


def series_json(series: Series) -> dict:
    cast = series_cast(series=series)
    chapters = chapters_of(series=series)
    listed = [chapter_json(chapter) for chapter in chapters]
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


def series_cast(*, series: Series) -> SeriesCast:
    """Every character and place of the series' chapters, each as the latest chapter that
    has it (names matched ignoring case), in the order they first appeared."""
    characters: dict[str, CarriedCharacter] = {}
    places: dict[str, CarriedPlace] = {}
    for chapter in chapters_of(series=series):
        in_use = sheet_rows_in_use(storyboard=chapter)
        for character in chapter.characters.all():
            sheets = {
                outfit: sheet for (name, outfit), sheet in in_use.items() if name == character.name
            }
            key = character.name.casefold()
            characters[key] = CarriedCharacter(character, chapter.chapter, sheets)
        for place in places_of(storyboard=chapter):
            places[place.name.casefold()] = CarriedPlace(place, chapter.chapter)
    return SeriesCast(characters=list(characters.values()), places=list(places.values()))
