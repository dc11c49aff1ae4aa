"""Writes to translations: a person's lines, a chat model's draft, deleting one.

None of them touches art, holds or credits. Lock order: the storyboard row
(what the lines are paired with must not change under a write), then the
translation row.
"""

from __future__ import annotations

from django.db import transaction
from django.utils.translation import gettext, ngettext

from mangagen.kernel import quotas
from mangagen.lettering import languages
from mangagen.storyboards import limits
from mangagen.storyboards.lock_objects import lock_storyboard
from mangagen.storyboards.models import Storyboard

from . import selectors
from .chat import Line, get_translator
from .errors import NoTranslator, TranslationRefused
from .lock_objects import lock_translation
from .matching import Edit, Place, Resolved, Slot, apply
from .models import Translation

LIMITS = {
    Slot.TITLE: limits.MAX_TITLE,
    Slot.DIALOGUE: limits.MAX_DIALOGUE_TEXT,
    Slot.CAPTION: limits.MAX_CAPTION,
    Slot.SFX: limits.MAX_SFX_TEXT,
}


def save_translation(
    *,
    storyboard: Storyboard,
    language: str,
    title: Edit | None = None,
    panels: list[dict] | None = None,
) -> Translation:
    """Sets the lines given, creating the translation when the comic has none in
    `language` yet.

    `title` None keeps the title. Each panel given (`index`; `dialogue`, an
    Edit per line by position; `caption`, an Edit or None) has its lines
    replaced: a line left out or empty is untranslated. Panels not given keep
    theirs. A line sent as it stands keeps its state (a stale line stays
    stale unless the Edit says it is `current`). Raises TranslationRefused for
    a language the lettering cannot set or the original's own, and for lines
    the comic does not have.
    """
    with transaction.atomic():
        storyboard, translation = _locked(storyboard, language)
        lines, unused = selectors.resolved(storyboard=storyboard, translation=translation)
        edits = _edits(lines, title=title, panels=panels or [])
        translation.lines = [e.to_json() for e in apply(lines, unused, edits)]
        translation.save()
        return translation


def draft_translation(*, storyboard: Storyboard, language: str, user) -> tuple[Translation, str]:
    """Fills the translation's missing lines with the chat model's (`TRANSLATOR`),
    creating the translation if needed, and says what it did.

    Raises NoTranslator when none is configured, LimitReached past the daily
    draft quota (one call counted; nothing asked when nothing is missing),
    TranslatorFailed when the model cannot be used. Lines a person translated,
    or whose original changed, while the model was answering are left as they are.
    """
    translator = get_translator()
    if translator is None:
        raise NoTranslator(
            gettext(
                "No translation model is configured here (TRANSLATOR): translate the lines by hand."
            )
        )
    target = _target(storyboard, language)
    existing = storyboard.translations.filter(language=target).first()
    lines, _ = selectors.resolved(storyboard=storyboard, translation=existing)
    wanted = {_id(line.original.place): line for line in lines if line.missing}
    if not wanted and existing is not None:
        return existing, "Every line is translated already."
    asked = {}
    if wanted:
        quotas.take_chat_call(user=user)
        asked = translator.translate(
            source=storyboard.language,
            target=target,
            lines=[
                Line(
                    key, line.original.text, line.original.speaker, LIMITS[line.original.place.slot]
                )
                for key, line in wanted.items()
            ],
        )
    with transaction.atomic():  # the model took its time: only lines still missing, as sent
        storyboard, translation = _locked(storyboard, target)
        lines, unused = selectors.resolved(storyboard=storyboard, translation=translation)
        edits = {
            line.original.place: Edit(asked[key], drafted=True)
            for line in lines
            if line.missing
            and (key := _id(line.original.place)) in asked
            and wanted[key].original.text == line.original.text
        }
        translation.lines = [e.to_json() for e in apply(lines, unused, edits)]
        translation.save()
    return translation, _notice(drafted=len(edits), asked=len(wanted))


@transaction.atomic
def delete_translation(*, storyboard: Storyboard, language: str) -> None:
    """Deletes the comic's translation into `language` (NoSuchTranslation if none)."""
    selectors.find(storyboard=storyboard, language=language).delete()


def _locked(storyboard: Storyboard, language: str) -> tuple[Storyboard, Translation]:
    """The storyboard and its translation into `language`, locked in that order; a new
    (unsaved) translation when it has none yet."""
    storyboard = lock_storyboard(pk=storyboard.pk)
    target = _target(storyboard, language)
    translation = lock_translation(storyboard=storyboard, language=target)
    if translation is None:
        if storyboard.translations.count() >= limits.MAX_TRANSLATIONS:
            raise TranslationRefused(
                gettext("A comic may have %(cap)s translations; delete one first.")
                % {"cap": limits.MAX_TRANSLATIONS}
            )
        translation = Translation(storyboard=storyboard, language=target)
    return storyboard, translation


def _target(storyboard: Storyboard, language: str) -> str:
    code = languages.normalise(language)
    if code is None:
        raise TranslationRefused(
            gettext("%(language)r is not a language the lettering can set; use one of %(codes)s.")
            % {"language": language, "codes": ", ".join(languages.CODES)}
        )
    if code == storyboard.language:
        raise TranslationRefused(
            gettext("%(language)s is this comic's original language: edit the storyboard.")
            % {"language": languages.display_name(code)}
        )
    return code


def _each_place(slot: Slot, index: int, given: list[Edit], have: int) -> dict[Place, Edit]:
    """Each of panel `index`'s `have` places of `slot`, by position: its edit in
    `given`, or an empty one past the end of `given`."""
    return {
        Place(slot, index, position): given[position] if position < len(given) else Edit("")
        for position in range(have)
    }


def _edits(lines: list[Resolved], *, title: Edit | None, panels: list[dict]) -> dict[Place, Edit]:
    """Each line the request sets, by place; TranslationRefused for one the comic lacks."""
    places = {line.original.place for line in lines}
    edits: dict[Place, Edit] = {}
    if title is not None:
        edits[Place(Slot.TITLE)] = title
    indices = {place.panel for place in places if place.slot != Slot.TITLE}
    counts: dict[int, int] = {}
    effects: dict[int, int] = {}
    for place in places:
        if place.slot == Slot.DIALOGUE:
            counts[place.panel] = counts.get(place.panel, 0) + 1
        if place.slot == Slot.SFX:
            effects[place.panel] = effects.get(place.panel, 0) + 1
    seen = set()
    for number, panel in enumerate(panels):
        index = panel["index"]
        where = f"panels[{number}]"
        if index in seen:
            raise TranslationRefused(
                gettext("%(where)s.index: panel %(index)s is given twice.")
                % {"where": where, "index": index}
            )
        seen.add(index)
        dialogue = panel.get("dialogue", [])
        caption = panel.get("caption") or Edit("")
        sfx = panel.get("sfx")
        if index not in indices and (
            any(line.text for line in [*dialogue, *(sfx or [])]) or caption.text
        ):
            raise TranslationRefused(
                gettext("%(where)s.index: the comic has no panel %(index)s with text.")
                % {"where": where, "index": index}
            )
        if len(dialogue) > counts.get(index, 0):
            raise TranslationRefused(
                gettext(
                    "%(where)s.dialogue: panel %(index)s has %(lines)s lines, "
                    "not %(given)s; reload to see the comic as it is now."
                )
                % {
                    "where": where,
                    "index": index,
                    "lines": counts.get(index, 0),
                    "given": len(dialogue),
                }
            )
        edits.update(_each_place(Slot.DIALOGUE, index, dialogue, counts.get(index, 0)))
        if sfx is not None:  # sound effects are set only when sent
            if len(sfx) > effects.get(index, 0):
                raise TranslationRefused(
                    gettext(
                        "%(where)s.sfx: panel %(index)s has %(count)s sound effects, "
                        "not %(given)s; reload to see the comic as it is now."
                    )
                    % {
                        "where": where,
                        "index": index,
                        "count": effects.get(index, 0),
                        "given": len(sfx),
                    }
                )
            edits.update(_each_place(Slot.SFX, index, sfx, effects.get(index, 0)))
        if Place(Slot.CAPTION, index) in places:
            edits[Place(Slot.CAPTION, index)] = caption
        elif caption.text:
            raise TranslationRefused(
                gettext("%(where)s.caption: panel %(index)s has no caption.")
                % {"where": where, "index": index}
            )
    return edits


def _id(place: Place) -> str:
    """A line's id in a request to the model: `title`, `p2.l1` (panel 2, line 1), `p2.c`."""
    if place.slot == Slot.TITLE:
        return "title"
    if place.slot == Slot.CAPTION:
        return f"p{place.panel}.c"
    if place.slot == Slot.SFX:
        return f"p{place.panel}.s{place.line + 1}"
    return f"p{place.panel}.l{place.line + 1}"


def _notice(*, drafted: int, asked: int) -> str:
    if drafted == asked:
        return ngettext(
            "The language model drafted %(drafted)s line.",
            "The language model drafted %(drafted)s lines.",
            drafted,
        ) % {"drafted": drafted}
    return gettext(
        "The language model drafted %(drafted)s of the %(asked)s missing lines; "
        "the others are still to translate."
    ) % {"drafted": drafted, "asked": asked}
