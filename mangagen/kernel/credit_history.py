"""A person's credit history as they see it: the journal, less what is for operators.

The journal keeps every reason verbatim for admin. A person sees a fixed
wording for anything an operator did by hand (an admin action records the
operator's username and note, `manage.py grant_credits` its note) and for a
render failure (its error names the provider and its internals).

The journal is append-only and written in English; what the app itself wrote
there (a purchase, demo credits, a hold's "job 12 panel 1") is recognised
here and shown in the interface's language.
"""

from __future__ import annotations

import re

from django.utils.translation import gettext, gettext_lazy

from ledger.models import Transfer

from .failed_render import RENDER_FAILED

BY_HAND = {
    Transfer.Kind.GRANT: gettext_lazy("Credits added by our support team"),
    Transfer.Kind.REVOKE: gettext_lazy("Credits removed by our support team"),
    Transfer.Kind.PENDING: gettext_lazy("Hold placed by our support team"),
    Transfer.Kind.POST: gettext_lazy("Hold captured by our support team"),
    Transfer.Kind.VOID: gettext_lazy("Hold released by our support team"),
}
# Reasons written by operators' tools, not by the app for the person.
OPERATOR_PREFIXES = ("admin ", "manage.py ")
RENDER_FAILED_PREFIX = "render failed:"

# What the app writes in the journal (payments/services.py, views/credits.py,
# runstack, jobs/steps.py, paid_render.py), read back to be translated.
_REASONS = [
    (
        re.compile(r"Purchase of the (?P<pack>.+) pack"),
        gettext_lazy("Purchase of the %(pack)s pack"),
    ),
    (
        re.compile(r"Demo credits \(DEBUG, no Stripe\)"),
        gettext_lazy("Demo credits (DEBUG, no Stripe)"),
    ),
    (
        re.compile(r"Demo credits for the local run command"),
        gettext_lazy("Demo credits for the local run command"),
    ),
]
_REFERENCES = [
    (
        re.compile(r"job (?P<job>\d+) panel (?P<panel>\d+)"),
        gettext_lazy("job %(job)s panel %(panel)s"),
    ),
    (
        re.compile(r"sheet (?P<sheet>\d+) of (?P<look>.+) \(storyboard (?P<storyboard>\d+)\)"),
        gettext_lazy("sheet %(sheet)s of %(look)s (storyboard %(storyboard)s)"),
    ),
]


def _translated(text: str, known) -> str:
    for pattern, message in known:
        match = pattern.fullmatch(text)
        if match:
            return str(message) % match.groupdict()
    return text


def by_operator(transfer: Transfer) -> bool:
    """Whether an operator made `transfer` by hand (in admin, or with a management command)."""
    return transfer.actor_id is not None or (transfer.reason or "").startswith(OPERATOR_PREFIXES)


def public_reason(transfer: Transfer) -> str:
    """What `transfer.reason` may say to the account's owner, in the interface's language;
    never an operator's name or note."""
    reason = transfer.reason or ""
    if by_operator(transfer):
        return str(BY_HAND[transfer.kind])
    if reason.startswith(RENDER_FAILED_PREFIX):
        return gettext(RENDER_FAILED)
    return _translated(reason, _REASONS)


def public_reference(reference: str) -> str:
    """A hold's or transfer's reference ("job 12 panel 1") in the interface's language."""
    return _translated(reference or "", _REFERENCES)
