"""Row locks of the ledger's Python path: the one way its services lock a hold.

The ledger's lock order (docs/architecture.md): the hold row, then the
idempotency key's journal row, then account rows by ascending pk, then shard
rows. Only the hold's row is locked with SELECT … FOR UPDATE; the rows after it
are locked by the writes themselves, in that order.
"""

from __future__ import annotations

from datetime import datetime

from .models import Hold


def lock_hold(*, pk: int) -> Hold:
    """The hold's row (not its account's or transfer's, fetched with it), locked."""
    return (
        Hold.objects.select_for_update(of=("self",))
        .select_related("account", "pending_transfer")
        .get(pk=pk)
    )


def lock_expired_hold(*, pk: int, now: datetime) -> Hold | None:
    """The hold's row, locked, if it is still pending and past `expires_at` at `now`;
    None otherwise, or while another transaction holds it (the next sweep takes it)."""
    return (
        Hold.objects.select_for_update(skip_locked=True, of=("self",))
        .select_related("pending_transfer")
        .filter(pk=pk, state=Hold.State.PENDING, expires_at__lte=now)
        .order_by("pk")
        .first()
    )
