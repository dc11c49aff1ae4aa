"""Reads about character sheets: which sheet each character uses, and how the API shows it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext

from ledger.models import Hold
from mangagen.renderers import public
from mangagen.storyboards.hashing import art_hash
from mangagen.storyboards.models import Storyboard

from .models import CharacterSheet, SheetSource, SheetState


@dataclass(frozen=True)
class CharacterSheets:
    """One look's sheets (a character's usual look, or one outfit): the newest (any state)
    and the newest ready one."""

    newest: CharacterSheet
    ready: CharacterSheet | None


def by_look(*, storyboard: Storyboard) -> dict[tuple[str, str], CharacterSheets]:
    """(name, outfit) -> that look's sheets; `outfit` is "" for the usual look."""
    return _by_look(CharacterSheet.objects.filter(storyboard=storyboard).order_by("-pk"))


def _by_look(sheets: Iterable[CharacterSheet]) -> dict[tuple[str, str], CharacterSheets]:
    """`by_look` over one storyboard's `sheets`, given newest first."""
    ready: dict[tuple[str, str], CharacterSheet] = {}
    newest: dict[tuple[str, str], CharacterSheet] = {}
    for sheet in sheets:
        newest.setdefault((sheet.name, sheet.outfit), sheet)
        if sheet.state == SheetState.READY:
            ready.setdefault((sheet.name, sheet.outfit), sheet)
    return {
        look: CharacterSheets(newest=sheet, ready=ready.get(look)) for look, sheet in newest.items()
    }


def is_stale(
    sheet: CharacterSheet, *, description: str, style: str, outfit_description: str = ""
) -> bool:
    """A rendered sheet is stale once its character's description (or, for an outfit's
    sheet, the outfit's description) or the style changed."""
    if sheet.source != SheetSource.RENDERED:
        return False
    drawn_for = (sheet.description, sheet.outfit_description, sheet.style)
    return drawn_for != (description, outfit_description, style)


def sheets_in_use(*, storyboard: Storyboard) -> dict[str, str]:
    """name -> hash of the sheet each character's panels are drawn from (ready, not stale).

    Characters with no such sheet are absent, so a storyboard without sheets
    hashes its panels as it always did.
    """
    in_use = sheet_rows_in_use(storyboard=storyboard)
    return {name: sheet.hash for (name, outfit), sheet in in_use.items() if not outfit}


def outfit_sheets_in_use(*, storyboard: Storyboard) -> dict[tuple[str, str], str]:
    """(name, outfit) -> hash of the outfit's sheet in use (ready, not stale)."""
    in_use = sheet_rows_in_use(storyboard=storyboard)
    return {look: sheet.hash for look, sheet in in_use.items() if look[1]}


def sheet_rows_in_use(*, storyboard: Storyboard) -> dict[tuple[str, str], CharacterSheet]:
    """(name, outfit) -> the sheet in use of each look the comic has (ready, not stale)."""
    return _in_use(storyboard, by_look(storyboard=storyboard))


def sheet_rows_in_use_of_each(
    *, storyboards: list[Storyboard]
) -> dict[int, dict[tuple[str, str], CharacterSheet]]:
    """storyboard pk -> its `sheet_rows_in_use`, for every one of `storyboards`, their sheets
    read in one query. Their characters are `storyboard.characters.all()`: prefetch them
    ("characters") for no query per storyboard."""
    sheets: dict[int, list[CharacterSheet]] = {board.pk: [] for board in storyboards}
    for sheet in CharacterSheet.objects.filter(storyboard__in=storyboards).order_by("-pk"):
        sheets[sheet.storyboard_id].append(sheet)
    return {board.pk: _in_use(board, _by_look(sheets[board.pk])) for board in storyboards}


def _in_use(
    storyboard: Storyboard, sheets_by_look: dict[tuple[str, str], CharacterSheets]
) -> dict[tuple[str, str], CharacterSheet]:
    """`sheet_rows_in_use` of `storyboard`, from its sheets by look (`by_look`)."""
    looks = _looks(storyboard)
    in_use = {}
    for look, sheets in sheets_by_look.items():
        sheet = sheets.ready
        if sheet is None or look not in looks:
            continue
        if not is_stale(sheet, **looks[look], style=storyboard.style):
            in_use[look] = sheet
    return in_use


def _looks(storyboard: Storyboard) -> dict[tuple[str, str], dict[str, str]]:
    """(name, outfit) -> what its sheet is drawn from, for every look the comic has."""
    looks = {}
    for character in storyboard.characters.all():
        looks[(character.name, "")] = {"description": character.description}
        for outfit in character.outfits:
            looks[(character.name, outfit["name"])] = {
                "description": character.description,
                "outfit_description": outfit.get("description", ""),
            }
    return looks


def sheet_image_url(sheet: CharacterSheet) -> str | None:
    if sheet.state != SheetState.READY or not sheet.image:
        return None
    return reverse("sheet-image", args=[sheet.image.name.removeprefix("sheets/")])


def as_json(
    sheets: CharacterSheets, *, description: str, style: str, outfit_description: str = ""
) -> dict:
    """The API's `sheet` of a character (API.md): state, image_url, hash, and more.

    `state` is the newest sheet's (a redo shows "rendering"); the image and
    hash are those of the newest ready sheet, which stays in use while a redo
    renders or after it fails.
    """
    newest, ready = sheets.newest, sheets.ready
    drawn_for = {
        "description": description,
        "style": style,
        "outfit_description": outfit_description,
    }
    # A failure's stored text is a renderer's public message (English): shown translated.
    state, error = (
        newest.state,
        public.shown(newest.error) if newest.state == SheetState.FAILED else "",
    )
    if newest.state == SheetState.READY and is_stale(newest, **drawn_for):
        state = SheetState.STALE
    if newest.state == SheetState.RENDERING and is_lost(newest):
        # Its worker died: say so, so the person can start another (which releases its hold).
        state, error = SheetState.FAILED, gettext("The render was lost; try again.")
    return {
        "state": state,
        "image_url": sheet_image_url(ready) if ready else None,
        "hash": ready.hash if ready else None,
        "source": (ready or newest).source,
        "in_use": bool(ready) and not is_stale(ready, **drawn_for),
        "error": error,
    }


def is_lost(sheet: CharacterSheet) -> bool:
    """A sheet rendering for longer than any render may take, or whose hold has ended."""
    cutoff = timezone.now() - timedelta(seconds=settings.RENDER_STUCK_SECONDS)
    return sheet.created_at <= cutoff or sheet.hold.state != Hold.State.PENDING


def sheets_json(*, storyboard: Storyboard) -> dict[tuple[str, str], dict]:
    """(name, outfit) -> the API's `sheet`, for every look of the storyboard that has one
    (`outfit` "" for a character's usual look)."""
    looks = _looks(storyboard)
    return {
        look: as_json(sheets, **looks[look], style=storyboard.style)
        for look, sheets in by_look(storyboard=storyboard).items()
        if look in looks
    }


def references(*, storyboard_id: int, sheets: dict[str, str]) -> dict[str, bytes]:
    """name -> the image bytes of the ready sheet with that hash (for the renderers).

    `sheets` maps a name to the hash of a sheet of theirs, of their usual look or of
    an outfit. A sheet deleted since a job started is simply absent: that character
    is drawn from the description alone.
    """
    if not sheets:
        return {}
    found = {}
    rows = CharacterSheet.objects.filter(
        storyboard_id=storyboard_id,
        state=SheetState.READY,
        name__in=list(sheets),
        hash__in=list(sheets.values()),
    )
    for sheet in rows:
        if sheets.get(sheet.name) != sheet.hash or sheet.name in found:
            continue
        try:
            with sheet.image.open("rb") as handle:
                found[sheet.name] = handle.read()
        except OSError:
            continue
    return found


def redrawn_for_sheets(*, storyboard: Storyboard, panels, kept: set[str]) -> list[int]:
    """Indices of the panels to draw only because a character's sheet changed.

    A panel counts when its picture is kept under another of its characters'
    sheets (an older ready one, or none): the same panel but for the sheet.
    """
    descriptions = {c.name: c.description for c in storyboard.characters.all()}
    ready: dict[str, set[str]] = {}
    for name, sheet_hash in CharacterSheet.objects.filter(
        storyboard=storyboard, state=SheetState.READY, outfit=""
    ).values_list("name", "hash"):
        ready.setdefault(name, set()).add(sheet_hash)
    found = []
    for panel in panels:
        if panel.art_hash in kept:
            continue
        used = dict(panel.sheets)
        candidates = [{}]
        for name in panel.characters:
            for other in (*ready.get(name, ()), None):
                candidate = {k: v for k, v in used.items() if k != name}
                if other is not None:
                    candidate[name] = other
                candidates.append(candidate)
        for candidate in candidates:
            if candidate == used:
                continue
            picture = art_hash(
                style=storyboard.style,
                description=panel.description,
                shot=panel.shot,
                characters=panel.characters,
                character_descriptions=descriptions,
                sheets=candidate,
                art_inputs=panel.art_inputs,
                blocking=panel.blocking,
            )
            if picture in kept:
                found.append(panel.index)
                break
    return found
