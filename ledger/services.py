"""Every write to the ledger. Keyword-only, atomic, idempotent by key.

Lock order, everywhere: the hold row (when resolving one), then the
idempotency key's journal row (its unique index makes a concurrent twin
wait), then account rows by ascending pk, then system-account shard rows.
Balance decrements are single conditional UPDATEs, so two racing callers can
never both spend the last credit.

A system account's balance lives in shard rows (`BalanceShard`), the shard
chosen by the user account on the other side, so parallel captures by
different people never queue on one row.

On PostgreSQL, authorize, capture, release and the sweep take the fast path
(`fast_path`): the same steps in one stored-function call, one round trip.
Elsewhere, and with settings.LEDGER_FAST_PATH = False, they run here.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import TYPE_CHECKING, TypeVar

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Sum
from django.utils import timezone

from . import errors, fast_path
from .lock_objects import lock_expired_hold, lock_hold
from .metrics import count_expired, counted
from .models import Account, BalanceShard, Hold, SystemAccount, Transfer, shard_for

if TYPE_CHECKING:
    from django.contrib.auth.models import User

T = TypeVar("T")


# --- accounts -----------------------------------------------------------------


def account_for(user: User) -> Account:
    """The user's credits account, created on first use."""
    account, _ = Account.objects.get_or_create(user=user, defaults={"kind": Account.Kind.USER})
    return account


def system_account(code: SystemAccount | str) -> Account:
    """The operator's account `code`, with `available` its balance: the sum of its shards.

    (Its own row holds zero by a CHECK, so this instance must not be saved.)
    """
    account = _system_account_row(code)
    shards = BalanceShard.objects.filter(account=account).aggregate(total=Sum("available"))
    account.available = shards["total"] or 0
    return account


def _system_account_row(code: SystemAccount | str) -> Account:
    account, _ = Account.objects.get_or_create(
        code=SystemAccount(code), defaults={"kind": Account.Kind.SYSTEM}
    )
    return account


# --- grants and revocations ---------------------------------------------------------


@counted("grant")
def grant(
    *,
    account: Account,
    amount: int,
    key: str,
    reason: str,
    source: SystemAccount = SystemAccount.GRANTS,
    actor: User | None = None,
) -> Transfer:
    """Adds `amount` credits to `account`, taken from the system `source` account."""
    _check_amount(amount)
    return _posted_transfer(
        kind=Transfer.Kind.GRANT,
        debit=_system_account_row(source),
        credit=account,
        amount=amount,
        key=key,
        reason=reason,
        actor=actor,
    )


@counted("revoke")
def revoke(
    *,
    account: Account,
    amount: int,
    key: str,
    reason: str,
    sink: SystemAccount = SystemAccount.REFUNDS,
    actor: User | None = None,
) -> Transfer:
    """Takes `amount` available credits back; refuses to go below zero."""
    _check_amount(amount)
    return _posted_transfer(
        kind=Transfer.Kind.REVOKE,
        debit=account,
        credit=_system_account_row(sink),
        amount=amount,
        key=key,
        reason=reason,
        actor=actor,
    )


def _posted_transfer(
    *,
    kind: str,
    debit: Account,
    credit: Account,
    amount: int,
    key: str,
    reason: str,
    actor: User | None,
) -> Transfer:
    def replay(existing: Transfer) -> Transfer:
        _require_same(
            key,
            existing,
            kind=kind,
            debit_account_id=debit.pk,
            credit_account_id=credit.pk,
            amount=amount,
            reason=reason,
        )
        return existing

    def write() -> Transfer:
        transfer = Transfer.objects.create(
            key=key,
            kind=kind,
            debit_account=debit,
            credit_account=credit,
            amount=amount,
            reason=reason,
            actor=actor,
        )
        _move(debit=debit, credit=credit, amount=amount)
        return transfer

    return _idempotent(key=key, replay=replay, write=write)


def _move(*, debit: Account, credit: Account, amount: int) -> None:
    """Posts `amount` from debit to credit: the user's row, then the system shard."""
    if debit.kind == Account.Kind.SYSTEM:
        Account.objects.filter(pk=credit.pk).update(available=F("available") + amount)
        _add_to_shard(system_id=debit.pk, user_id=credit.pk, amount=-amount)
        return
    if not Account.objects.filter(pk=debit.pk, available__gte=amount).update(
        available=F("available") - amount
    ):
        raise _insufficient(debit, amount)
    _add_to_shard(system_id=credit.pk, user_id=debit.pk, amount=amount)


def _add_to_shard(*, system_id: int, user_id: int, amount: int) -> None:
    """Adds `amount` (negative: takes) to the system account's shard for this user."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO ledger_balanceshard (account_id, shard, available) VALUES (%s, %s, %s)"
            " ON CONFLICT (account_id, shard)"
            " DO UPDATE SET available = ledger_balanceshard.available + excluded.available",
            [system_id, shard_for(user_id), amount],
        )


def _insufficient(account: Account, amount: int) -> errors.InsufficientCredits:
    available = Account.objects.filter(pk=account.pk).values_list("available", flat=True).first()
    return errors.InsufficientCredits(available=available or 0, requested=amount)


# --- flags -------------------------------------------------------------------------


def flag_account(*, account: Account, reason: str) -> Account:
    """Freezes an account for an operator: no new holds (renders) until cleared."""
    Account.objects.filter(pk=account.pk, flagged_at__isnull=True).update(
        flagged_at=timezone.now(), flag_reason=reason[:255]
    )
    account.refresh_from_db()
    return account


def clear_account_flag(*, account: Account) -> Account:
    Account.objects.filter(pk=account.pk).update(flagged_at=None, flag_reason="")
    account.refresh_from_db()
    return account


# --- holds -------------------------------------------------------------------------


@counted("authorize")
def authorize(
    *,
    account: Account,
    amount: int,
    key: str,
    reference: str,
    expires_in: timedelta | int | None = None,
) -> Hold:
    """Places a hold: `available` drops and `held` rises by `amount`; nothing is spent.

    Raises InsufficientCredits when `available < amount`.
    """
    _check_amount(amount)
    _check_key(key)
    db = fast_path.database()
    if account.kind == Account.Kind.USER and db is None:
        flag = (
            Account.objects.filter(pk=account.pk).values_list("flagged_at", "flag_reason").first()
        )
        if flag and flag[0] is not None:
            raise errors.AccountFlagged(reason=flag[1])
    if expires_in is None:
        expires_in = timedelta(seconds=settings.HOLD_DEFAULT_EXPIRES_SECONDS)
    elif not isinstance(expires_in, timedelta):
        expires_in = timedelta(seconds=expires_in)
    if db is not None:
        return _authorize_fast(db, account, amount, key, reference, expires_in)
    revenue = _system_account_row(SystemAccount.REVENUE)

    def replay(existing: Transfer) -> Hold:
        _require_same(
            key,
            existing,
            kind=Transfer.Kind.PENDING,
            debit_account_id=account.pk,
            amount=amount,
            reference=reference,
        )
        return existing.hold

    def write() -> Hold:
        pending = Transfer.objects.create(
            key=key,
            kind=Transfer.Kind.PENDING,
            debit_account=account,
            credit_account=revenue,
            amount=amount,
            reference=reference,
        )
        if not Account.objects.filter(pk=account.pk, available__gte=amount).update(
            available=F("available") - amount, held=F("held") + amount
        ):
            raise _insufficient(account, amount)
        return Hold.objects.create(
            account=account,
            amount=amount,
            reference=reference,
            expires_at=timezone.now() + expires_in,
            pending_transfer=pending,
        )

    return _idempotent(key=key, replay=replay, write=write)


def _authorize_fast(
    db, account: Account, amount: int, key: str, reference: str, expires_in
) -> Hold:
    now = timezone.now()
    answer = fast_path.authorize(
        db,
        account_id=account.pk,
        amount=amount,
        key=key,
        reference=reference,
        now=now,
        expires_at=now + expires_in,
    )
    if answer.status == "flagged":
        raise errors.AccountFlagged(reason=answer.detail or "")
    if answer.status == "insufficient":
        raise errors.InsufficientCredits(available=int(answer.detail or 0), requested=amount)
    if answer.status == "replay":
        _require_same(
            key,
            answer.original,
            kind=Transfer.Kind.PENDING,
            debit_account_id=account.pk,
            amount=amount,
            reference=reference,
        )
    assert answer.hold is not None  # only a refused authorize comes back without one
    return answer.hold


@counted("capture")
def capture(
    *,
    hold: Hold,
    amount: int | None = None,
    key: str | None = None,
    reason: str = "",
    actor: User | None = None,
) -> Hold:
    """Spends `amount` (default: all) of a pending hold; the remainder is released.

    Refuses a hold that is resolved (HoldAlreadyResolved) or past `expires_at`
    (HoldExpired), and an amount outside `0 < amount <= hold.amount`.
    A retry with the same `key` returns the original result.
    """
    if amount is not None:
        _check_amount(amount)
    return _resolve(
        hold=hold,
        kind=Transfer.Kind.POST,
        state=Hold.State.CAPTURED,
        amount=amount,
        key=key,
        reason=reason,
        actor=actor,
    )


@counted("release")
def release(*, hold: Hold, reason: str, key: str | None = None, actor: User | None = None) -> Hold:
    """Returns the whole of a pending hold to `available`.

    Refuses a hold that is already resolved (HoldAlreadyResolved); a retry
    with the same `key` returns the original result.
    """
    return _resolve(
        hold=hold,
        kind=Transfer.Kind.VOID,
        state=Hold.State.RELEASED,
        amount=None,
        key=key,
        reason=reason,
        actor=actor,
    )


def expire_stale_holds(*, now: datetime | None = None) -> int:
    """Releases every pending hold past `expires_at`, oldest first; returns how many.

    Idempotent and safe beside captures and other sweeps: each hold is
    resolved under its own row lock, and a hold another transaction holds is
    left for the next sweep.
    """
    now = now or timezone.now()
    stale = (
        Hold.objects.filter(state=Hold.State.PENDING, expires_at__lte=now)
        .order_by("expires_at", "pk")
        .values_list("pk", "account_id")
    )
    expired = 0
    db = fast_path.database()
    for pk, account_id in list(stale):
        if db is not None:
            answer = fast_path.resolve(
                db,
                hold_id=pk,
                account_id=account_id,
                kind=Transfer.Kind.VOID,
                state=Hold.State.EXPIRED,
                amount=None,
                key=f"hold:{pk}:expire",
                explicit_key=False,
                reason="expired",
                actor_id=None,
                now=now,
                sweep=True,
            )
            expired += answer.status == "done"
            continue
        with transaction.atomic():
            hold = lock_expired_hold(pk=pk, now=now)
            if hold is None:
                continue
            _write_resolution(
                hold=hold,
                kind=Transfer.Kind.VOID,
                state=Hold.State.EXPIRED,
                amount=hold.amount,
                key=f"hold:{hold.pk}:expire",
                reason="expired",
                actor=None,
                now=now,
            )
            expired += 1
    count_expired(expired)
    return expired


def _resolve(
    *,
    hold: Hold,
    kind: str,
    state: str,
    amount: int | None,
    key: str | None,
    reason: str,
    actor: User | None,
) -> Hold:
    explicit_key = key is not None
    key = key if key is not None else f"hold:{hold.pk}:resolve"
    db = fast_path.database()
    if db is not None:
        return _resolve_fast(db, hold, kind, state, amount, key, explicit_key, reason, actor)

    def replay(existing: Transfer) -> Hold:
        if not explicit_key:
            # An automatic key only collides when the hold is resolved already.
            locked = Hold.objects.get(pk=hold.pk)
            raise _already_resolved(locked)
        _require_same(
            key,
            existing,
            kind=kind,
            pending_id=hold.pending_transfer_id,
            amount=hold.amount if amount is None else amount,
        )
        return Hold.objects.get(pk=hold.pk)

    def write() -> Hold:
        locked = lock_hold(pk=hold.pk)
        if locked.state != Hold.State.PENDING:
            resolution = locked.resolution_transfer
            assert resolution is not None  # a resolved hold keeps its resolution
            if explicit_key and resolution.key == key:
                return replay(resolution)  # a concurrent twin of this very call won
            raise _already_resolved(locked)
        now = timezone.now()
        if kind == Transfer.Kind.POST and locked.expires_at <= now:
            raise errors.HoldExpired(hold_id=locked.pk)
        captured = locked.amount if amount is None else amount
        if kind == Transfer.Kind.POST and captured > locked.amount:
            raise errors.InvalidAmount(
                f"Cannot capture {captured} from hold #{locked.pk} of {locked.amount}."
            )
        _write_resolution(
            hold=locked,
            kind=kind,
            state=state,
            amount=captured,
            key=key,
            reason=reason,
            actor=actor,
            now=now,
        )
        return locked

    return _idempotent(key=key, replay=replay, write=write, look_first=explicit_key)


def _resolve_fast(
    db,
    hold: Hold,
    kind: str,
    state: str,
    amount: int | None,
    key: str,
    explicit_key: bool,
    reason,
    actor: User | None,
) -> Hold:
    _check_key(key)
    answer = fast_path.resolve(
        db,
        hold_id=hold.pk,
        account_id=hold.account_id,
        kind=kind,
        state=state,
        amount=amount,
        key=key,
        explicit_key=explicit_key,
        reason=reason,
        actor_id=actor.pk if actor is not None else None,
        now=timezone.now(),
    )
    if answer.status == "missing":
        raise Hold.DoesNotExist(f"Hold #{hold.pk} does not exist.")
    locked = answer.hold
    assert locked is not None  # every answer but "missing" carries the hold
    if answer.status == "done":
        return locked
    if answer.status == "key_used":
        if not explicit_key:
            raise _already_resolved(locked)
        _require_same(
            key,
            answer.original,
            kind=kind,
            pending_id=locked.pending_transfer_id,
            amount=locked.amount if amount is None else amount,
        )
        return locked
    if answer.status == "expired":
        raise errors.HoldExpired(hold_id=locked.pk)
    if answer.status == "too_much":
        raise errors.InvalidAmount(
            f"Cannot capture {amount} from hold #{locked.pk} of {locked.amount}."
        )
    raise _already_resolved(locked)


def _write_resolution(
    *,
    hold: Hold,
    kind: str,
    state: str,
    amount: int,
    key: str,
    reason: str,
    actor: User | None,
    now,
) -> None:
    """Journals a post or void of `hold` (locked by the caller) and moves balances."""
    user_id = hold.account_id
    revenue_id = hold.pending_transfer.credit_account_id
    transfer = Transfer.objects.create(
        key=key,
        kind=kind,
        debit_account_id=user_id,
        credit_account_id=revenue_id,
        amount=amount,
        pending=hold.pending_transfer,
        reference=hold.reference,
        reason=reason,
        actor=actor,
    )
    spent = amount if kind == Transfer.Kind.POST else 0
    Account.objects.filter(pk=user_id).update(
        held=F("held") - hold.amount, available=F("available") + (hold.amount - spent)
    )
    if spent:
        _add_to_shard(system_id=revenue_id, user_id=user_id, amount=spent)
    hold.state = state
    hold.captured_amount = spent or None
    hold.resolution_transfer = transfer
    hold.resolved_at = now
    hold.resolved_by = actor
    hold.resolution_reason = reason
    hold.save(
        update_fields=[
            "state",
            "captured_amount",
            "resolution_transfer",
            "resolved_at",
            "resolved_by",
            "resolution_reason",
        ]
    )


def _already_resolved(hold: Hold) -> errors.HoldAlreadyResolved:
    if hold.state == Hold.State.EXPIRED:
        return errors.HoldAlreadyExpired(hold_id=hold.pk)
    return errors.HoldAlreadyResolved(hold_id=hold.pk, state=hold.state)


# --- idempotency ------------------------------------------------------------------------


def _idempotent(
    *, key: str, replay: Callable[[Transfer], T], write: Callable[[], T], look_first: bool = True
) -> T:
    """Runs `write` once per key; a retry gets `replay` of the original transfer.

    A concurrent twin blocks on the key's unique index and, once the first
    commits, fails its insert and replays.
    """
    _check_key(key)
    if look_first:
        existing = Transfer.objects.filter(key=key).first()
        if existing is not None:
            return replay(existing)
    try:
        with transaction.atomic():
            return write()
    except IntegrityError:
        existing = Transfer.objects.filter(key=key).first()
        if existing is None:
            raise
        return replay(existing)


def _require_same(key: str, existing: Transfer | SimpleNamespace, **expected) -> None:
    for field, value in expected.items():
        if getattr(existing, field) != value:
            raise errors.IdempotencyConflict(
                key=key, detail=f"{field} was {getattr(existing, field)!r}, now {value!r}."
            )


def _check_key(key: str) -> None:
    if not key:
        raise ValueError("Every ledger operation needs an idempotency key.")


def _check_amount(amount: int) -> None:
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise errors.InvalidAmount(f"Amount must be a positive whole number, not {amount!r}.")
