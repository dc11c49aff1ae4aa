"""Reads of the ledger: balances the journal recomputes, holds, history, mismatches."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import (
    BigIntegerField,
    Count,
    Exists,
    F,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from .models import Account, BalanceShard, Hold, Transfer


def _summed(transfers: QuerySet, side: str) -> Coalesce:
    per_account = (
        transfers.filter(**{side: OuterRef("pk")})
        .order_by()
        .values(side)
        .annotate(total=Sum("amount"))
        .values("total")
    )
    return Coalesce(
        Subquery(per_account, output_field=BigIntegerField()),
        Value(0),
        output_field=BigIntegerField(),
    )


def with_balances(accounts: QuerySet[Account]) -> QuerySet[Account]:
    """Annotates `balance`: the cached available credits, one figure per account.

    It is the account's row plus its shards; a system account keeps its whole
    balance in shards (its row holds zero), a user account has none.
    """
    shards = (
        BalanceShard.objects.filter(account=OuterRef("pk"))
        .order_by()
        .values("account")
        .annotate(total=Sum("available"))
        .values("total")
    )
    return accounts.annotate(
        balance=F("available")
        + Coalesce(
            Subquery(shards, output_field=BigIntegerField()),
            Value(0),
            output_field=BigIntegerField(),
        )
    )


def with_journal_balances(accounts: QuerySet[Account]) -> QuerySet[Account]:
    """Annotates `balance` (cached, see with_balances) beside `journal_available`
    and `journal_held`, recomputed from transfers.

    available = posted credits - posted debits - open pending debits;
    held = open pending debits (holds neither captured nor voided).
    """
    posted = Transfer.objects.filter(kind__in=Transfer.POSTED_KINDS)
    open_pending = Transfer.objects.filter(kind=Transfer.Kind.PENDING).exclude(
        Exists(Transfer.objects.filter(pending=OuterRef("pk")))
    )
    open_holds = (
        Hold.objects.filter(account=OuterRef("pk"), state=Hold.State.PENDING)
        .order_by()
        .values("account")
        .annotate(total=Sum("amount"))
        .values("total")
    )
    return (
        with_balances(accounts)
        .annotate(
            journal_credits=_summed(posted, "credit_account"),
            journal_debits=_summed(posted, "debit_account"),
            journal_held=_summed(open_pending, "debit_account"),
            open_holds_total=Coalesce(
                Subquery(open_holds, output_field=BigIntegerField()),
                Value(0),
                output_field=BigIntegerField(),
            ),
        )
        .annotate(
            journal_available=F("journal_credits") - F("journal_debits") - F("journal_held"),
        )
    )


def balance_of(*, user_id: int) -> tuple[int, int]:
    """(available, held) of the person's account in one read; (0, 0) before it exists."""
    row = Account.objects.filter(user_id=user_id).values_list("available", "held").first()
    return row if row is not None else (0, 0)


@dataclass(frozen=True)
class Figures:
    """A person's balance as shown to them, with `as_of`: how many lines their account's
    journal had when it was read. Every change of a balance appends to the journal in
    the change's transaction, and the journal is never edited, so of two readings the
    one with the greater `as_of` is never the older; a page keeps the greatest."""

    available: int
    held: int
    as_of: int


def figures_of(*, user_id: int) -> Figures:
    """The person's (available, held) and their journal's length, in one statement (one
    snapshot); zeros before their account exists."""
    entries = {
        side: Subquery(
            Transfer.objects.filter(**{side: OuterRef("pk")})
            .order_by()
            .values(side)
            .annotate(n=Count("pk"))
            .values("n"),
            output_field=BigIntegerField(),
        )
        for side in ("debit_account", "credit_account")
    }
    row = (
        Account.objects.filter(user_id=user_id)
        .annotate(
            entries=Coalesce(entries["debit_account"], 0) + Coalesce(entries["credit_account"], 0)
        )
        .values_list("available", "held", "entries")
        .first()
    )
    return Figures(*row) if row is not None else Figures(0, 0, 0)


def open_holds(*, account: Account) -> QuerySet[Hold]:
    return Hold.objects.filter(account=account, state=Hold.State.PENDING).order_by("pk")


def transfers_for(*, account: Account) -> QuerySet[Transfer]:
    """The account's journal, newest first."""
    return (
        Transfer.objects.filter(Q(debit_account=account) | Q(credit_account=account))
        .select_related("pending__hold", "hold")
        .order_by("-pk")
    )


def history_for(*, account: Account) -> QuerySet[Transfer]:
    """The account's history as its owner reads it, newest first: one line per grant or
    revocation and one per hold (its pending transfer, with the hold and whatever
    resolved it, so that a hold and its capture or release read as one row)."""
    return (
        Transfer.objects.filter(Q(debit_account=account) | Q(credit_account=account))
        .exclude(kind__in=Transfer.RESOLVING_KINDS)
        .select_related("hold__resolution_transfer")
        .order_by("-pk")
    )


def row_effect(*, transfer: Transfer, account: Account) -> tuple[int, int]:
    """How a line of `history_for` moved `account`'s (available, held), all told: a hold's
    with its resolution (held now: −amount, +amount; captured: −captured, 0; released or
    expired: nothing)."""
    if transfer.kind != Transfer.Kind.PENDING or transfer.debit_account_id != account.pk:
        return balance_effect(transfer=transfer, account=account)
    hold = transfer.hold
    if hold.state == Hold.State.PENDING:
        return -hold.amount, hold.amount
    return -(hold.captured_amount or 0), 0


def balance_effect(*, transfer: Transfer, account: Account) -> tuple[int, int]:
    """How `transfer` moved `account`'s (available, held)."""
    sign = 1 if transfer.credit_account_id == account.pk else -1
    if transfer.kind in (Transfer.Kind.GRANT, Transfer.Kind.REVOKE):
        return sign * transfer.amount, 0
    if transfer.debit_account_id != account.pk:
        # The operator's side of a hold: only a capture moves it.
        return (transfer.amount, 0) if transfer.kind == Transfer.Kind.POST else (0, 0)
    if transfer.kind == Transfer.Kind.PENDING:
        return -transfer.amount, transfer.amount
    assert transfer.pending is not None  # a post or void always resolves a pending transfer
    held = transfer.pending.amount
    if transfer.kind == Transfer.Kind.POST:
        return held - transfer.amount, -held
    return held, -held


@dataclass(frozen=True)
class Mismatch:
    kind: str
    subject: str
    detail: str
    admin_url: str = ""


def reconciliation(*, now: datetime | None = None) -> list[Mismatch]:
    """Everything that is not reconciled; an empty list means all is well."""
    now = now or timezone.now()
    found: list[Mismatch] = []
    total = 0
    account: Any  # annotated by with_journal_balances and with_open_holds
    for account in with_journal_balances(Account.objects.all()).select_related("user"):
        total += account.balance + account.held
        if (account.balance, account.held) != (account.journal_available, account.journal_held):
            found.append(
                Mismatch(
                    "balance",
                    str(account),
                    f"cached available/held {account.balance}/{account.held}, "
                    f"journal says {account.journal_available}/{account.journal_held}",
                    f"/admin/ledger/account/{account.pk}/change/",
                )
            )
        if account.held != account.open_holds_total:
            found.append(
                Mismatch(
                    "held",
                    str(account),
                    f"held is {account.held} but its open holds sum to {account.open_holds_total}",
                    f"/admin/ledger/account/{account.pk}/change/",
                )
            )
    if total != 0:
        found.append(
            Mismatch(
                "conservation", "all accounts", f"balances sum to {total}, not 0 (double entry)"
            )
        )
    stale = Hold.objects.filter(state=Hold.State.PENDING, expires_at__lte=now)
    for hold in stale.select_related("account__user").order_by("expires_at", "pk"):
        found.append(
            Mismatch(
                "stale_hold",
                str(hold),
                f"{hold.account}: pending past its expiry at {hold.expires_at:%Y-%m-%d %H:%M:%S} "
                f"({hold.reference or 'no reference'})",
                f"/admin/ledger/hold/{hold.pk}/change/",
            )
        )
    resolved_in_journal = Exists(Transfer.objects.filter(pending=OuterRef("pending_transfer")))
    for hold in Hold.objects.filter(resolved_in_journal, state=Hold.State.PENDING):
        found.append(Mismatch("hold_state", str(hold), "pending, but the journal resolved it"))
    return found
