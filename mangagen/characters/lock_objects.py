"""Row locks of character sheets: the one way a service locks a comic's sheets.

In the studio's lock order (mangagen/storyboards/lock_objects.py) a comic's
sheets come after the comic's row, which the caller holds already (or tried
to: a comic deleted meanwhile took its sheets with it); then the ledger's own
rows. Sheets are locked FOR UPDATE.
"""

from __future__ import annotations

from mangagen.storyboards.models import Storyboard

from .models import CharacterSheet, SheetState


def try_lock_sheet(*, pk: int) -> CharacterSheet | None:
    """The sheet's row, locked; None if it is gone (deleted meanwhile)."""
    return CharacterSheet.objects.select_for_update().filter(pk=pk).first()


def lock_sheets_of_look(*, storyboard: Storyboard, name: str, outfit: str) -> list[CharacterSheet]:
    """Every sheet of the character's look (`outfit`, "" for the usual one), locked,
    newest first (pk descending)."""
    return list(
        CharacterSheet.objects.select_for_update()
        .filter(storyboard=storyboard, name=name, outfit=outfit)
        .order_by("-pk")
    )


def lock_pictured_sheets_of_look(
    *, storyboard: Storyboard, name: str, outfit: str
) -> list[CharacterSheet]:
    """The look's sheets that have a picture, locked, newest first (pk descending)."""
    return list(
        CharacterSheet.objects.select_for_update()
        .filter(storyboard=storyboard, name=name, outfit=outfit)
        .exclude(image="")
        .order_by("-pk")
    )


def lock_rendering_sheet_of_look(
    *, storyboard: Storyboard, name: str, outfit: str
) -> CharacterSheet | None:
    """The look's newest sheet still rendering, locked (that one alone); None if none is."""
    return (
        CharacterSheet.objects.select_for_update()
        .filter(storyboard=storyboard, name=name, outfit=outfit, state=SheetState.RENDERING)
        .order_by("-pk")
        .first()
    )


def lock_rendering_sheets(*, storyboard: Storyboard) -> list[CharacterSheet]:
    """Every sheet of the comic still rendering, locked in pk order."""
    return list(
        CharacterSheet.objects.select_for_update()
        .filter(storyboard=storyboard, state=SheetState.RENDERING)
        .order_by("pk")
    )
