"""A character sheet as a render kind: a front view and a few expressions, one picture,
paid like a panel (its hold placed by services.request_sheet, captured once the sheet
lands, since from then on the Characters step shows it; released on every other path).
"""

from __future__ import annotations

import io

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone
from PIL import Image

from mangagen.kernel import paid_render
from mangagen.render_kinds.kind import Checked, RenderKind, Request, Work, register
from mangagen.renderers import CharacterSpec, RenderResult, SheetSpec
from mangagen.renderers.base import Verb
from mangagen.renderers.gpu_pool import Priority, Withdrawn
from mangagen.storyboards.lock_objects import try_lock_storyboard
from mangagen.storyboards.services import rehash_storyboard

from .lock_objects import try_lock_sheet
from .models import CharacterSheet, SheetState


class Sheet(RenderKind):
    """What its owner waits for on the Characters step: confirmed work in the GPU pool;
    drawn from the character's description, outfit and the comic's style; kept as the
    look's sheet in use (the panels hashed again) and paid as it lands. A render of it
    names its sheet row (`ref`, its pk) and answers "shown", "stale" (not rendering any
    more) or "discarded" (replaced or deleted while it rendered)."""

    name = "sheet"
    credits = 1
    verb = Verb.SHEET
    priority = Priority.CONFIRMED

    def prepare(self, ref: int) -> Work | str:
        sheet = CharacterSheet.objects.filter(pk=ref, state=SheetState.RENDERING).first()
        if sheet is None:
            return "stale"
        spec = SheetSpec(
            style=sheet.style,
            character=CharacterSpec(
                sheet.name, sheet.description, sheet=sheet.hash, outfit=sheet.outfit_description
            ),
        )
        request = Request(self.verb, spec, spec.default_seed())
        return Work(
            ref,
            self.renderer(),
            request,
            ticket=f"sheet:{ref}",
            priority=self.priority,
            extra=sheet.storyboard_id,
        )

    def keep(self, work: Work, first: RenderResult, checked: Checked) -> str:
        with transaction.atomic():
            storyboard = try_lock_storyboard(pk=work.extra)
            sheet = try_lock_sheet(pk=work.ref)
            if storyboard is None or sheet is None or sheet.state != SheetState.RENDERING:
                return "discarded"
            refused = paid_render.capture(hold=sheet.hold, reason="sheet shown")
            if refused:
                sheet.state = SheetState.FAILED
                sheet.error = refused
                sheet.save(update_fields=["state", "error"])
                return "discarded"
            png = as_png(checked.result.image)
            sheet.image.save("sheet.png", ContentFile(png), save=False)
            sheet.bytes = len(png)
            sheet.state = SheetState.READY
            sheet.rendered_at = timezone.now()
            sheet.save()
            rehash_storyboard(storyboard=storyboard)
        return "shown"

    def withdrawn(self, work: Work, withdrawn: Withdrawn) -> str:
        return "discarded"

    def fail(self, ref: int, *, error: str, detail: str = "") -> None:
        """Its hold is released, the person may try again."""
        with transaction.atomic():
            sheet = CharacterSheet.objects.filter(pk=ref).first()
            if sheet is None:
                return
            try_lock_storyboard(pk=sheet.storyboard_id)
            sheet = try_lock_sheet(pk=ref)
            if sheet is not None and sheet.state == SheetState.RENDERING:
                fail_rendering(sheet, error=error, detail=detail)

    def describe(self, ref: int) -> str:
        return f"sheet {ref}"


SHEET = register(Sheet())


def fail_rendering(sheet: CharacterSheet, *, error: str, detail: str = "") -> None:
    """A rendering sheet fails: its hold is released; `error` is what the person is told,
    `detail` (the provider's words) is for operators. The caller holds its row lock."""
    paid_render.release(sheet.hold, reason=paid_render.failure_reason(error=error, detail=detail))
    sheet.state = SheetState.FAILED
    sheet.error = error[:500]
    sheet.save(update_fields=["state", "error"])


def as_png(image: bytes) -> bytes:
    """Sheets are kept (and served, and sent as references) as PNG, whatever a provider sent."""
    if image.startswith(b"\x89PNG\r\n\x1a\n"):
        return image
    buffer = io.BytesIO()
    with Image.open(io.BytesIO(image)) as decoded:
        decoded.save(buffer, format="PNG")
    return buffer.getvalue()
