"""A person's credit history in their words: what each line of it paid for.

The ledger knows accounts, transfers and holds, never comics: a hold's `reference` is a
label it keeps verbatim. The studio describes its own holds here, by joining each one to
the row that paid with it: a panel's render attempt (a first drawing, a redo, a touch-up,
or panel one prepared on Review for a job never confirmed) or a character sheet. So the
history names the comic and what was drawn, in the interface's language, and a hold and
its capture or release read as one row with its outcome (`ledger.selectors.history_for`
gives the rows, `row_effect` their effect all told).

Used by `GET /api/credits/transfers/` (mangagen/api/credits.py) and the Credits page
(mangagen/views/credits.py), the same rows for both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.utils.translation import gettext, gettext_lazy

from ledger import selectors as ledger_selectors
from ledger.models import Account, Hold, Transfer
from mangagen.characters.models import CharacterSheet
from mangagen.jobs.models import RenderAttempt
from mangagen.kernel.credit_history import (
    RENDER_FAILED_PREFIX,
    by_operator,
    public_reason,
    public_reference,
)

# What a hold paid for: the comic's title, then what was drawn.
PANEL = gettext_lazy("%(title)s: panel %(index)s")
REDO = gettext_lazy("%(title)s: panel %(index)s, drawn again")
TOUCHUP = gettext_lazy("%(title)s: touch-up of panel %(index)s")
PREPARED = gettext_lazy("%(title)s: panel %(index)s, prepared on Review")
SHEET = gettext_lazy("%(title)s: character sheet of %(name)s")
OUTFIT_SHEET = gettext_lazy("%(title)s: character sheet of %(name)s (%(outfit)s)")

# How it ended.
OUTCOMES = {
    Hold.State.PENDING: gettext_lazy("held now"),
    Hold.State.CAPTURED: gettext_lazy("paid"),
    Hold.State.RELEASED: gettext_lazy("given back"),
    Hold.State.EXPIRED: gettext_lazy("given back: its time ran out"),
}
FAILED = gettext_lazy("given back: the render failed")


@dataclass(frozen=True)
class HistoryRow:
    """One row of the history: a grant or revocation, or a hold with its outcome."""

    transfer: Transfer  # the row's first journal line (a hold's: its pending transfer)
    description: str
    outcome: str  # a hold's state; "" for a grant or revocation
    outcome_words: str
    available_delta: int
    held_delta: int
    resolved_at: datetime | None


def rows(*, account: Account, transfers: Iterable[Transfer]) -> list[HistoryRow]:
    """`transfers` (lines of `ledger.selectors.history_for`, e.g. one page of them) as the
    account's owner reads them; three queries whatever their number."""
    transfers = list(transfers)
    holds = {t.hold.pk: t.hold for t in transfers if t.kind == Transfer.Kind.PENDING}
    words = describe(holds.values())
    made = []
    for transfer in transfers:
        available, held = ledger_selectors.row_effect(transfer=transfer, account=account)
        if transfer.kind != Transfer.Kind.PENDING:
            made.append(
                HistoryRow(transfer, public_reason(transfer), "", "", available, held, None)
            )
            continue
        hold = transfer.hold
        made.append(
            HistoryRow(
                transfer=transfer,
                description=words.get(hold.pk) or _by_hand_or_label(transfer),
                outcome=hold.state,
                outcome_words=_outcome(hold),
                available_delta=available,
                held_delta=held,
                resolved_at=hold.resolved_at,
            )
        )
    return made


def open_hold_rows(*, account: Account) -> list[dict]:
    """The account's open holds, each with what it pays for in words ("" for one the
    studio does not know), as the credits page and the dashboard list them."""
    holds = list(ledger_selectors.open_holds(account=account))
    words = describe(holds)
    return [{"hold": hold, "description": words.get(hold.pk) or ""} for hold in holds]


def describe(holds: Iterable[Hold]) -> dict[int, str]:
    """What each hold paid for, by its id, for the holds the studio knows (a render
    attempt's or a sheet's); the others are left out."""
    ids = [hold.pk for hold in holds]
    if not ids:
        return {}
    words = {}
    attempts = RenderAttempt.objects.filter(hold_id__in=ids).select_related(
        "job__storyboard", "touchup"
    )
    for attempt in attempts:
        job = attempt.job
        title, index = job.storyboard.title, attempt.index
        if hasattr(attempt, "touchup"):
            form = TOUCHUP
        elif not job.confirmed:
            form = PREPARED
        elif attempt.attempt > 1:
            form = REDO
        else:
            form = PANEL
        words[attempt.hold_id] = str(form) % {"title": title, "index": index}
    sheets = CharacterSheet.objects.filter(hold_id__in=ids).select_related("storyboard")
    for sheet in sheets:
        form = OUTFIT_SHEET if sheet.outfit else SHEET
        words[sheet.hold_id] = str(form) % {
            "title": sheet.storyboard.title,
            "name": sheet.name,
            "outfit": sheet.outfit,
        }
    return words


def _outcome(hold: Hold) -> str:
    """How the hold ended, in words: an operator's hand said as such (never their name or
    note), a failed render as one."""
    resolution = hold.resolution_transfer
    if resolution is not None and by_operator(resolution):
        return public_reason(resolution)
    if resolution is not None and (resolution.reason or "").startswith(RENDER_FAILED_PREFIX):
        return str(FAILED)
    return str(OUTCOMES[hold.state])


def _by_hand_or_label(transfer: Transfer) -> str:
    """A hold no row of the studio names (an operator's, or one whose comic was deleted):
    the operator's fixed words, else its label in the interface's language."""
    if by_operator(transfer):
        return public_reason(transfer)
    return public_reference(transfer.reference) or gettext("A render")
