"""Reads of translations: a comic's languages, one translation line by line, and the
lettering of a language (what pages and exports draw)."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils.translation import gettext

from mangagen.lettering import languages
from mangagen.storyboards.models import Storyboard

from .errors import NoSuchTranslation
from .matching import Entry, Place, Resolved, Slot, originals, resolve
from .models import Translation


def find(*, storyboard: Storyboard, language: str) -> Translation:
    """The comic's translation into `language`; NoSuchTranslation when it has none
    (the original's own language has none either)."""
    code = languages.normalise(language)
    translation = (
        storyboard.translations.filter(language=code).first()
        if code and code != storyboard.language
        else None
    )
    if translation is None:
        raise NoSuchTranslation(
            gettext("This comic has no translation into %(language)r.") % {"language": language}
        )
    return translation


def resolved(*, storyboard: Storyboard, translation: Translation | None):
    """Every line of the original now with its translation, and the stored lines that
    pair with none (see matching.py). `translation` None: nothing translated yet."""
    stored = [Entry.from_json(data) for data in translation.lines] if translation else []
    lines = originals(title=storyboard.title, panels=storyboard.panels.all())
    return resolve(lines, stored)


def counts(lines: list[Resolved]) -> dict[str, int]:
    """How many lines (the title counted) are still to translate, and how many are stale."""
    return {
        "missing": sum(line.missing for line in lines),
        "stale": sum(line.stale for line in lines),
    }


def summaries(*, storyboard: Storyboard) -> dict:
    """The comic's original language and each translation with what it still needs."""
    found = []
    for translation in storyboard.translations.all():
        lines, _ = resolved(storyboard=storyboard, translation=translation)
        found.append(
            {
                "language": translation.language,
                "name": languages.display_name(translation.language),
                **counts(lines),
                "updated_at": translation.updated_at,
            }
        )
    return {
        "original": storyboard.language,
        "name": languages.display_name(storyboard.language),
        "translations": found,
    }


def translation_json(*, storyboard: Storyboard, translation: Translation) -> dict:
    """One translation line by line beside the original (docs/api.md, "Translations")."""
    lines, _ = resolved(storyboard=storyboard, translation=translation)
    by_place = {line.original.place: line for line in lines}
    title = by_place.get(Place(Slot.TITLE))
    panels = []
    for panel in storyboard.panels.all():
        dialogue = [
            by_place[Place(Slot.DIALOGUE, panel.index, position)]
            for position in range(len(panel.dialogue))
        ]
        caption = by_place.get(Place(Slot.CAPTION, panel.index))
        sfx = [
            by_place[Place(Slot.SFX, panel.index, position)] for position in range(len(panel.sfx))
        ]
        panels.append(
            {
                "index": panel.index,
                "dialogue": [
                    # the balloon is the original's: its style and place, read only
                    _line(line)
                    | {
                        "speaker": line.original.speaker,
                        "style": stored.get("style", "speech"),
                        "place": stored.get("place"),
                    }
                    for line, stored in zip(dialogue, panel.dialogue, strict=True)
                ],
                "caption": _line(caption) if caption else _EMPTY,
                "sfx": [_line(line) for line in sfx],
            }
        )
    return {
        "language": translation.language,
        "name": languages.display_name(translation.language),
        "original_language": storyboard.language,
        "title": title.text if title else "",
        "title_line": _line(title) if title else _EMPTY,
        "panels": panels,
        **counts(lines),
        "updated_at": translation.updated_at,
    }


_EMPTY = {"text": "", "original": "", "stale": False, "drafted": False, "was": None}


def _line(line: Resolved) -> dict:
    return {
        "text": line.text,
        "original": line.original.text,
        "stale": line.stale,
        "drafted": line.drafted,
        "was": line.entry.source if line.stale and line.entry else None,
    }


@dataclass(frozen=True)
class PanelText:
    # [{"speaker", "text", "style"?, "place"?}]: a translated line keeps its original's
    # balloon (style and place), only its text is the translation's.
    dialogue: list[dict] = field(default_factory=list)
    caption: str = ""
    sfx: list[dict] = field(default_factory=list)  # [{"text", "x", "y", "size", "angle"}]


@dataclass(frozen=True)
class Lettering:
    """What a comic is lettered with in one language: a translated line where there
    is one, the original's otherwise."""

    language: str
    title: str
    panels: dict[int, PanelText]
    translated: bool  # False: the original itself

    def of(self, index: int) -> PanelText:
        return self.panels.get(index, PanelText())


def lettering(*, storyboard: Storyboard, language: str | None = None) -> Lettering:
    """The comic's lettering in `language` (None or the original's: the original);
    NoSuchTranslation for a language it has no translation into."""
    if not language or languages.normalise(language) == storyboard.language:
        return Lettering(
            storyboard.language,
            storyboard.title,
            {
                p.index: PanelText(list(p.dialogue), p.caption, list(p.sfx))
                for p in storyboard.panels.all()
            },
            translated=False,
        )
    panels = list(storyboard.panels.all())
    translation = find(storyboard=storyboard, language=language)
    lines, _ = resolved(storyboard=storyboard, translation=translation)
    text = {line.original.place: line.text or line.original.text for line in lines}
    title = next((t for place, t in text.items() if place.slot == Slot.TITLE), storyboard.title)
    return Lettering(
        translation.language,
        title,
        {
            p.index: PanelText(
                [
                    {**line, "text": text[Place(Slot.DIALOGUE, p.index, i)]}
                    for i, line in enumerate(p.dialogue)
                ],
                text.get(Place(Slot.CAPTION, p.index), p.caption),
                [
                    {**effect, "text": text[Place(Slot.SFX, p.index, i)]}
                    for i, effect in enumerate(p.sfx)
                ],
            )
            for p in panels
        },
        translated=True,
    )
