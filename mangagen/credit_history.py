"""A person's credit history as they see it: the journal, less what is for operators.

The journal keeps every reason verbatim for admin. A person sees a fixed
wording for anything an operator did by hand (an admin action records the
operator's username and note, `manage.py grant_credits` its note) and for a
render failure (its error names the provider and its internals).
"""

from __future__ import annotations

from ledger.models import Transfer

BY_HAND = {
    Transfer.Kind.GRANT: "Credits added by our support team",
    Transfer.Kind.REVOKE: "Credits removed by our support team",
    Transfer.Kind.PENDING: "Hold placed by our support team",
    Transfer.Kind.POST: "Hold captured by our support team",
    Transfer.Kind.VOID: "Hold released by our support team",
}
# Reasons written by operators' tools, not by the app for the person.
OPERATOR_PREFIXES = ("admin ", "manage.py ")
RENDER_FAILED_PREFIX = "render failed:"


def public_reason(transfer: Transfer) -> str:
    """What `transfer.reason` may say to the account's owner; never an operator's name or note."""
    reason = transfer.reason or ""
    if transfer.actor_id is not None or reason.startswith(OPERATOR_PREFIXES):
        return BY_HAND[transfer.kind]
    if reason.startswith(RENDER_FAILED_PREFIX):
        return "The render failed; nothing was charged"
    return reason
