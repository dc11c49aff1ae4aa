"""A paid render, a panel's or a character sheet's: one hold per render, of its kind's
price (mangagen/render_kinds/: each kind declares its `credits`), captured when the
picture is shown to its owner, released on every other path (a failure, a cancel, a
newer render replacing it, a deletion). A person pays for each render they are shown,
and nothing else; a kind that costs nothing places no hold.

Jobs (mangagen/jobs/steps.py, attempts.py) and sheets (mangagen/characters/services.py,
kinds.py) both pay this way: the hold's key names what it pays for; a failed render's
release says RENDER_FAILED_PREFIX, which the person's credit history reads as the
failed-render sentence; a render gives its database connection back before it waits
for a container or a provider.
"""

from __future__ import annotations

import logging

from django.db import close_old_connections, connection
from django.utils.translation import gettext_noop

from ledger import errors as ledger_errors
from ledger import services as ledger
from ledger.models import Hold
from mangagen.kernel.credit_history import RENDER_FAILED_PREFIX

# What a render whose hold ended before it was shown keeps as its error: stored as it is
# (in English, marked here for the catalog) and translated when shown, like a renderer's
# public message (mangagen/renderers/public.py `shown`).
HOLD_ENDED = gettext_noop("This render's hold ended before it could be shown. Try it again.")

logger = logging.getLogger(__name__)


def place_hold(*, owner, credits: int, key: str, reference: str, expires_in: int) -> Hold:
    """The render's hold of `credits` (its kind's price, more than 0) on its owner's
    account, under `key` (what it pays for). Raises InsufficientCredits or AccountFlagged
    (then nothing is held)."""
    if credits <= 0:
        raise ValueError(f"A render that costs {credits} credits places no hold.")
    return ledger.authorize(
        account=ledger.account_for(owner),
        amount=credits,
        key=key,
        reference=reference[:200],
        expires_in=expires_in,
    )


def capture(*, hold: Hold, reason: str) -> str:
    """Captures the hold of a render shown to its owner: "" once paid, or (the hold expired
    or was resolved meanwhile, nothing charged) HOLD_ENDED, the person's words for why the
    render could not be shown, to keep as its error; the ledger's own go to the log."""
    try:
        ledger.capture(hold=hold, key=f"{hold.key}:capture", reason=reason)
    except (ledger_errors.HoldExpired, ledger_errors.HoldAlreadyResolved) as exc:
        logger.warning(
            "A render was not shown: its hold %s could not be captured: %s", hold.pk, exc
        )
        return HOLD_ENDED
    return ""


def release(hold: Hold | None, *, reason: str) -> bool:
    """Releases the render's hold if it is still pending, as the hold's row says; returns
    whether this call released it."""
    if hold is None:
        return False
    hold.refresh_from_db(fields=["state"])  # the ledger's sweep may have expired it meanwhile
    if hold.state != Hold.State.PENDING:
        return False
    try:
        ledger.release(hold=hold, reason=reason[:200], key=f"{hold.key}:release")
    except ledger_errors.HoldAlreadyResolved:
        return False  # expired by the ledger's sweep between the read and the lock
    return True


def failure_reason(*, error: str, detail: str = "") -> str:
    """What the release of a failed render's hold says: RENDER_FAILED_PREFIX (the person's
    history shows "the render failed; nothing was charged", never these words), then
    the provider's own words (`detail`) or the person's (`error`) for operators."""
    return f"{RENDER_FAILED_PREFIX} {detail or error}"[:200]


def hold_no_connection() -> None:
    """A render gives its database connection back before it waits for a container or a
    provider, which can be long (outside a transaction: tests run the worker's code
    inside theirs)."""
    if not connection.in_atomic_block:
        close_old_connections()
