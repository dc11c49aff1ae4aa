"""Writes to character sheets: render one (paid like a panel), upload one, delete one.

Charging rule, the same as a panel's (mangagen/kernel/paid_render.py): one hold per
render, of the sheet kind's price (kinds.py, which also draws and keeps it); capture
when the sheet is shown to its owner (the render lands: from then on the Characters
step shows it); release on every other path (failure, a newer sheet replacing it,
deletion). An upload costs nothing.

Lock order: the storyboard row, then its sheet rows (lock_objects.py), then the
ledger's own.
A sheet that becomes (or stops being) the one in use re-hashes the
storyboard's panels in the same transaction, so the quote and Generate see
the new art hashes at once.

Uploads are free, so they are bounded instead: each look of a character (the
usual one, each outfit) keeps the pictures of its SHEETS_KEPT_PER_CHARACTER
newest sheets (never one a live job draws from), and a person's uploaded
pictures and copies of sheets (into a chapter or from the cast library, rendered
ones included) count toward PICTURE_BYTES_PER_PERSON with every other stored
picture of theirs (mangagen/characters/picture_budget.py).
"""

from __future__ import annotations

import logging
import secrets

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from mangagen.kernel import paid_render, storage
from mangagen.render_kinds import worker
from mangagen.storyboards import limits
from mangagen.storyboards.errors import ListFull, NameTaken
from mangagen.storyboards.lock_objects import lock_storyboard, try_lock_storyboard
from mangagen.storyboards.models import Character, Storyboard
from mangagen.storyboards.services import rehash_storyboard

from . import dispatch
from .errors import NoSuchCharacter, NoSuchOutfit
from .hashing import rendered_sheet_hash, uploaded_sheet_hash
from .kinds import SHEET, fail_rendering
from .lock_objects import (
    lock_pictured_sheets_of_look,
    lock_rendering_sheet_of_look,
    lock_rendering_sheets,
    lock_sheets_of_look,
)
from .models import CharacterSheet, SheetSource, SheetState, made_from
from .picture_budget import check_picture_bytes
from .selectors import is_lost

logger = logging.getLogger(__name__)

SHEETS_KEPT_PER_CHARACTER = 3  # pictures kept of each look's sheets, the newest first


def request_sheet(*, storyboard: Storyboard, name: str, outfit: str = "") -> CharacterSheet:
    """Starts rendering the character's sheet (of their usual look, or of `outfit`) under a
    new hold; returns the rendering sheet.

    A sheet of that look already rendering is returned as it is (a double click
    pays once), unless its render was lost (its hold ended, or it is older
    than RENDER_STUCK_SECONDS): then it fails and a new one starts. Raises
    NoSuchCharacter, NoSuchOutfit, or InsufficientCredits (then nothing changes).
    """
    with transaction.atomic():
        storyboard = lock_storyboard(pk=storyboard.pk)
        character = _character(storyboard, name)
        worn = _outfit_description(character, outfit)
        rendering = lock_rendering_sheet_of_look(storyboard=storyboard, name=name, outfit=outfit)
        if rendering is not None:
            if not is_lost(rendering):
                return rendering
            fail_rendering(rendering, error="Its render was lost; a new one replaced it.")
        sheet = CharacterSheet.objects.create(
            storyboard=storyboard,
            name=name,
            outfit=outfit,
            outfit_description=worn,
            source=SheetSource.RENDERED,
            state=SheetState.RENDERING,
            description=character.description,
            style=storyboard.style,
            hash=rendered_sheet_hash(
                name=name,
                description=character.description,
                style=storyboard.style,
                take=secrets.token_hex(8),
                outfit=worn,
            ),
        )
        look = f"{name} in {outfit}" if outfit else name
        sheet.hold = SHEET.place_hold(
            owner=storyboard.owner,
            key=f"sheet:{sheet.pk}:render",
            reference=f"sheet {sheet.pk} of {look} (storyboard {storyboard.pk})",
            expires_in=settings.RENDER_STUCK_SECONDS + 600,
        )
        sheet.save(update_fields=["hold"])
        dispatch.render_on_commit(sheet_id=sheet.pk)
    return sheet


def perform_sheet_render(*, sheet_id: int) -> str:
    """Renders a sheet as its kind says (kinds.py), through the one worker path; safe to
    run twice. Returns "shown", "stale" (not rendering any more) or "discarded"
    (replaced or deleted while it rendered). Raises RenderError."""
    return worker.perform(SHEET, sheet_id)


def fail_sheet_render(*, sheet_id: int, error: str, detail: str = "") -> None:
    """A sheet's render failed for good: its hold is released, the person may try again.
    `error` is what the person is told; `detail` (the provider's words) is for operators."""
    SHEET.fail(sheet_id, error=error, detail=detail)


def upload_sheet(
    *,
    storyboard: Storyboard,
    name: str,
    image: bytes,
    outfit: str = "",
    in_use: frozenset[str] = frozenset(),
) -> CharacterSheet:
    """Makes the person's own picture (validated and re-encoded, see uploads.py) the sheet
    in use, of the character's usual look or of `outfit`. A sheet of that look still
    rendering is replaced (its hold released). Costs nothing.

    That look's pictures past the SHEETS_KEPT_PER_CHARACTER newest go (rows now, files
    once committed), except sheets whose hash is in `in_use` (a live job draws from
    them). Raises NoSuchCharacter, NoSuchOutfit, or Refused (UPLOADS_FULL) when the
    person's stored pictures would take more than PICTURE_BYTES_PER_PERSON
    (picture_budget.check_picture_bytes); then nothing changes.
    """
    with storage.deleted_if_raised() as saved, transaction.atomic():
        storyboard = lock_storyboard(pk=storyboard.pk)
        _outfit_description(_character(storyboard, name), outfit)
        older = _past_the_newest(
            storyboard, name, outfit, keep=SHEETS_KEPT_PER_CHARACTER - 1, in_use=in_use
        )
        _check_picture_bytes(storyboard=storyboard, adding=len(image), leaving=older)
        rendering = lock_rendering_sheet_of_look(storyboard=storyboard, name=name, outfit=outfit)
        if rendering is not None:
            fail_rendering(rendering, error="Replaced by an uploaded picture.")
        sheet = _ready_sheet(
            storyboard=storyboard,
            name=name,
            outfit=outfit,
            image=image,
            saved=saved,
            source=SheetSource.UPLOADED,
            style=storyboard.style,
            hash=uploaded_sheet_hash(image=image),
        )
        _delete_sheets(older)
        rehash_storyboard(storyboard=storyboard)
    return sheet


def _past_the_newest(
    storyboard: Storyboard, name: str, outfit: str, *, keep: int, in_use: frozenset[str]
) -> list[CharacterSheet]:
    """The look's sheets with a picture past its `keep` newest, but none in use."""
    pictured = lock_pictured_sheets_of_look(storyboard=storyboard, name=name, outfit=outfit)
    return [sheet for sheet in pictured[keep:] if sheet.hash not in in_use]


def _check_picture_bytes(
    *, storyboard: Storyboard, adding: int, leaving: list[CharacterSheet]
) -> None:
    """PICTURE_BYTES_PER_PERSON (picture_budget.py), less what the sheets `leaving` free: those
    it counts (uploaded ones, and copies, which have no hold of their own)."""
    freed = sum(s.bytes for s in leaving if s.source == SheetSource.UPLOADED or s.hold_id is None)
    check_picture_bytes(owner_id=storyboard.owner_id, adding=adding, freeing=freed)


def _delete_sheets(sheets: list[CharacterSheet]) -> None:
    """Deletes the rows now and their pictures once the transaction commits."""
    files = [sheet.image.name for sheet in sheets if sheet.image]
    CharacterSheet.objects.filter(pk__in=[s.pk for s in sheets]).delete()
    storage.deleted_on_commit(files)


def delete_sheet(*, storyboard: Storyboard, name: str, outfit: str = "") -> None:
    """Removes every sheet of the character's usual look, or of `outfit` (a rendering one's
    hold is released); the files leave the storage once that is committed. Their panels
    go back to the description alone."""
    with transaction.atomic():
        storyboard = lock_storyboard(pk=storyboard.pk)
        sheets = lock_sheets_of_look(storyboard=storyboard, name=name, outfit=outfit)
        for sheet in sheets:
            if sheet.state == SheetState.RENDERING:
                paid_render.release(sheet.hold, reason="sheet deleted")
        _delete_sheets(sheets)
        rehash_storyboard(storyboard=storyboard)


def adopt_sheet(
    *, storyboard: Storyboard, name: str, outfit: str, like, image, saved: list[str]
) -> None:
    """Gives the storyboard's character a ready sheet that is the same sheet as `like`
    (a sheet of another comic, or of the cast library): its hash, source and what it was
    drawn from, with a copy of `image` (a stored file) whose name is added to `saved`.
    Nothing is rendered or paid. The caller holds the storyboard's row lock and hashes
    its panels again.

    A copy, of an uploaded picture or of a rendered one, counts against
    PICTURE_BYTES_PER_PERSON like an upload: raises Refused (UPLOADS_FULL) past it.
    """
    with image.open("rb") as handle:
        data = handle.read()
    _check_picture_bytes(storyboard=storyboard, adding=len(data), leaving=[])
    _ready_sheet(
        storyboard=storyboard,
        name=name,
        outfit=outfit,
        image=data,
        saved=saved,
        **made_from(like),
    )


def _ready_sheet(
    *,
    storyboard: Storyboard,
    name: str,
    outfit: str,
    image: bytes,
    saved: list[str],
    **made_from,
) -> CharacterSheet:
    """A ready sheet of that look, its picture `image` (PNG bytes, stored now: its name
    is added to `saved`); `made_from` its source, hash, and what a rendered one was
    drawn from."""
    sheet = CharacterSheet(
        storyboard=storyboard,
        name=name,
        outfit=outfit,
        state=SheetState.READY,
        bytes=len(image),
        rendered_at=timezone.now(),
        **made_from,
    )
    sheet.image.save("sheet.png", ContentFile(image), save=False)
    saved.append(sheet.image.name)
    sheet.save()
    return sheet


def add_character(
    *,
    storyboard: Storyboard,
    name: str,
    description: str,
    outfits: list[dict],
    sheets: dict[str, tuple[object, object]],
    saved: list[str],
) -> Character:
    """Adds a character to the storyboard, last, with `sheets` in use: outfit ("" for the
    usual look) -> (a sheet like the one to give it, its stored image), see adopt_sheet;
    the names of the files stored are added to `saved`. The caller holds the
    storyboard's row lock and hashes its panels again.

    Raises NameTaken (a character of that name, ignoring case), ListFull, or Refused
    (UPLOADS_FULL, see adopt_sheet).
    """
    names = list(storyboard.characters.values_list("name", flat=True))
    if name.casefold() in {n.casefold() for n in names}:
        raise NameTaken(
            gettext("This comic already has a character named %(name)r.") % {"name": name}
        )
    if len(names) >= limits.MAX_CHARACTERS:
        raise ListFull(
            gettext("A comic has at most %(cap)s characters.") % {"cap": limits.MAX_CHARACTERS}
        )
    character = Character.objects.create(
        storyboard=storyboard,
        position=len(names) + 1,
        name=name,
        description=description,
        outfits=outfits,
    )
    for outfit, (like, image) in sheets.items():
        adopt_sheet(
            storyboard=storyboard, name=name, outfit=outfit, like=like, image=image, saved=saved
        )
    return character


def end_sheet_renders(*, storyboard: Storyboard, reason: str) -> int:
    """Fails every sheet of the storyboard still rendering, releasing its hold; returns how many."""
    with transaction.atomic():
        try_lock_storyboard(pk=storyboard.pk)
        count = 0
        for sheet in lock_rendering_sheets(storyboard=storyboard):
            fail_rendering(sheet, error=reason)
            count += 1
    return count


def _character(storyboard: Storyboard, name: str) -> Character:
    character = storyboard.characters.filter(name=name).first()
    if character is None:
        raise NoSuchCharacter(
            gettext("This comic has no character named %(name)r.") % {"name": name}
        )
    return character


def _outfit_description(character: Character, outfit: str) -> str:
    """The description of the character's `outfit` ("" for their usual look)."""
    if not outfit:
        return ""
    for worn in character.outfits:
        if worn["name"] == outfit:
            return worn.get("description", "")
    raise NoSuchOutfit(
        gettext("%(name)s has no outfit named %(outfit)r.")
        % {"name": character.name, "outfit": outfit}
    )
