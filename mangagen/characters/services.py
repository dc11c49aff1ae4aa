"""Writes to character sheets: render one (paid like a panel), upload one, delete one.

Charging rule, the same as a panel's: one hold per render; capture when the
sheet is shown to its owner (the render lands: from then on the Characters
step shows it); release on every other path (failure, a newer sheet
replacing it, deletion). An upload costs nothing.

Lock order: the storyboard row, then its sheet rows, then the ledger's own.
A sheet that becomes (or stops being) the one in use re-hashes the
storyboard's panels in the same transaction, so the quote and Generate see
the new art hashes at once.
"""

from __future__ import annotations

import contextlib
import io
import logging
import secrets

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import close_old_connections, connection, transaction
from django.utils import timezone
from PIL import Image

from ledger import errors as ledger_errors
from ledger import services as ledger
from ledger.models import Hold
from mangagen.credit_history import RENDER_FAILED_PREFIX
from mangagen.errors import ApplicationError
from mangagen.queues import Queue
from mangagen.renderers import CharacterSpec, SheetSpec, get_renderer, observed
from mangagen.renderers.warmth import Priority, Withdrawn
from mangagen.storyboards.models import Character, Storyboard
from mangagen.storyboards.services import rehash_storyboard

from .hashing import rendered_sheet_hash, uploaded_sheet_hash
from .models import CharacterSheet, SheetSource, SheetState
from .selectors import is_lost

logger = logging.getLogger(__name__)

SHEET_CREDITS = 1  # a sheet is a render, priced like a panel's


class SheetError(ApplicationError):
    code = "sheet_error"
    status = 409


class NoSuchCharacter(SheetError):
    code = "no_such_character"
    status = 404


def request_sheet(*, storyboard: Storyboard, name: str) -> CharacterSheet:
    """Starts rendering the character's sheet under a new hold; returns the rendering sheet.

    A sheet of theirs already rendering is returned as it is (a double click
    pays once), unless its render was lost (its hold ended, or it is older
    than RENDER_STUCK_SECONDS): then it fails and a new one starts. Raises
    NoSuchCharacter, or InsufficientCredits (then nothing changes).
    """
    from .tasks import render_sheet

    with transaction.atomic():
        storyboard = Storyboard.objects.select_for_update().get(pk=storyboard.pk)
        character = _character(storyboard, name)
        rendering = _rendering(storyboard, name)
        if rendering is not None:
            if not is_lost(rendering):
                return rendering
            _fail(rendering, error="Its render was lost; a new one replaced it.")
        sheet = CharacterSheet.objects.create(
            storyboard=storyboard,
            name=name,
            source=SheetSource.RENDERED,
            state=SheetState.RENDERING,
            description=character.description,
            style=storyboard.style,
            hash=rendered_sheet_hash(
                name=name,
                description=character.description,
                style=storyboard.style,
                take=secrets.token_hex(8),
            ),
        )
        sheet.hold = ledger.authorize(
            account=ledger.account_for(storyboard.owner),
            amount=SHEET_CREDITS,
            key=f"sheet:{sheet.pk}:render",
            reference=f"sheet {sheet.pk} of {name} (storyboard {storyboard.pk})",
            expires_in=settings.RENDER_STUCK_SECONDS + 600,
        )
        sheet.save(update_fields=["hold"])
        transaction.on_commit(
            lambda: render_sheet.apply_async((sheet.pk,), queue=Queue.RENDER), robust=True
        )
    return sheet


def perform_sheet_render(*, sheet_id: int) -> str:
    """Renders a sheet; safe to run twice. Returns "shown", "stale" (not rendering any more)
    or "discarded" (replaced or deleted while it rendered). Raises RenderError."""
    renderer = get_renderer()
    sheet = CharacterSheet.objects.filter(pk=sheet_id, state=SheetState.RENDERING).first()
    if sheet is None:
        return "stale"
    spec = SheetSpec(
        style=sheet.style,
        character=CharacterSpec(sheet.name, sheet.description, sheet=sheet.hash),
    )
    if not connection.in_atomic_block:
        close_old_connections()  # the wait for a container can be long: hold no connection
    try:
        result = renderer.render_sheet(
            spec, spec.default_seed(), ticket=f"sheet:{sheet_id}", priority=Priority.CONFIRMED
        )
    except Withdrawn:
        return "discarded"
    observed.record(result)  # what the provider took, learned for every render
    with transaction.atomic():
        storyboard = Storyboard.objects.select_for_update().filter(pk=sheet.storyboard_id).first()
        sheet = CharacterSheet.objects.select_for_update().filter(pk=sheet_id).first()
        if storyboard is None or sheet is None or sheet.state != SheetState.RENDERING:
            return "discarded"
        try:
            ledger.capture(hold=sheet.hold, key=f"{sheet.hold.key}:capture", reason="sheet shown")
        except (ledger_errors.HoldExpired, ledger_errors.HoldAlreadyResolved) as exc:
            sheet.state = SheetState.FAILED
            sheet.error = f"This render's hold ended before it could be shown ({exc}). Try again."
            sheet.save(update_fields=["state", "error"])
            return "discarded"
        sheet.image.save("sheet.png", ContentFile(as_png(result.image)), save=False)
        sheet.state = SheetState.READY
        sheet.rendered_at = timezone.now()
        sheet.save()
        rehash_storyboard(storyboard=storyboard)
    return "shown"


def fail_sheet_render(*, sheet_id: int, error: str, detail: str = "") -> None:
    """A sheet's render failed for good: its hold is released, the person may try again.
    `error` is what the person is told; `detail` (the provider's words) is for operators."""
    with transaction.atomic():
        sheet = CharacterSheet.objects.filter(pk=sheet_id).first()
        if sheet is None:
            return
        Storyboard.objects.select_for_update().filter(pk=sheet.storyboard_id).first()
        sheet = CharacterSheet.objects.select_for_update().filter(pk=sheet_id).first()
        if sheet is not None and sheet.state == SheetState.RENDERING:
            _fail(sheet, error=error, detail=detail)


def upload_sheet(*, storyboard: Storyboard, name: str, image: bytes) -> CharacterSheet:
    """Makes the person's own picture (validated and re-encoded, see uploads.py) the sheet
    in use. A sheet still rendering is replaced (its hold released). Costs nothing."""
    with transaction.atomic():
        storyboard = Storyboard.objects.select_for_update().get(pk=storyboard.pk)
        _character(storyboard, name)
        rendering = _rendering(storyboard, name)
        if rendering is not None:
            _fail(rendering, error="Replaced by an uploaded picture.")
        sheet = CharacterSheet(
            storyboard=storyboard,
            name=name,
            source=SheetSource.UPLOADED,
            state=SheetState.READY,
            style=storyboard.style,
            hash=uploaded_sheet_hash(image=image),
            rendered_at=timezone.now(),
        )
        sheet.image.save("sheet.png", ContentFile(image), save=False)
        sheet.save()
        rehash_storyboard(storyboard=storyboard)
    return sheet


def delete_sheet(*, storyboard: Storyboard, name: str) -> None:
    """Removes every sheet of the character (a rendering one's hold is released); the files
    leave the disk once that is committed. Their panels go back to the description alone."""
    with transaction.atomic():
        storyboard = Storyboard.objects.select_for_update().get(pk=storyboard.pk)
        sheets = list(
            CharacterSheet.objects.select_for_update().filter(storyboard=storyboard, name=name)
        )
        for sheet in sheets:
            if sheet.state == SheetState.RENDERING:
                _release(sheet, reason="sheet deleted")
        files = [sheet.image for sheet in sheets if sheet.image]
        CharacterSheet.objects.filter(pk__in=[s.pk for s in sheets]).delete()
        rehash_storyboard(storyboard=storyboard)
        transaction.on_commit(lambda: [f.storage.delete(f.name) for f in files])


def end_sheet_renders(*, storyboard: Storyboard, reason: str) -> int:
    """Fails every sheet of the storyboard still rendering, releasing its hold; returns how many."""
    with transaction.atomic():
        Storyboard.objects.select_for_update().filter(pk=storyboard.pk).first()
        rendering = CharacterSheet.objects.select_for_update().filter(
            storyboard=storyboard, state=SheetState.RENDERING
        )
        count = 0
        for sheet in rendering.order_by("pk"):
            _fail(sheet, error=reason)
            count += 1
    return count


def _character(storyboard: Storyboard, name: str) -> Character:
    character = storyboard.characters.filter(name=name).first()
    if character is None:
        raise NoSuchCharacter(f"This comic has no character named {name!r}.")
    return character


def _rendering(storyboard: Storyboard, name: str) -> CharacterSheet | None:
    return (
        CharacterSheet.objects.select_for_update()
        .filter(storyboard=storyboard, name=name, state=SheetState.RENDERING)
        .first()
    )


def _fail(sheet: CharacterSheet, *, error: str, detail: str = "") -> None:
    # The person's history says "the render failed; nothing was charged"
    # (mangagen/credit_history.py), never the error's own words.
    _release(sheet, reason=f"{RENDER_FAILED_PREFIX} {detail or error}"[:200])
    sheet.state = SheetState.FAILED
    sheet.error = error[:500]
    sheet.save(update_fields=["state", "error"])


def _release(sheet: CharacterSheet, *, reason: str) -> None:
    """Releases the sheet's hold if it is still pending, as the hold's row says."""
    if sheet.hold_id is None:
        return
    sheet.hold.refresh_from_db(fields=["state"])
    if sheet.hold.state != Hold.State.PENDING:
        return
    # The ledger's sweep may expire it between the read and the lock.
    with contextlib.suppress(ledger_errors.HoldAlreadyResolved):
        ledger.release(hold=sheet.hold, reason=reason[:200], key=f"{sheet.hold.key}:release")


def as_png(image: bytes) -> bytes:
    """Sheets are kept (and served, and sent as references) as PNG, whatever a provider sent."""
    if image.startswith(b"\x89PNG\r\n\x1a\n"):
        return image
    buffer = io.BytesIO()
    with Image.open(io.BytesIO(image)) as decoded:
        decoded.save(buffer, format="PNG")
    return buffer.getvalue()
