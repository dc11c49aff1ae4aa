"""Every ledger operation, error and invariant (docs/architecture.md, "The ledger")."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from ledger import errors, services
from ledger.models import Account, Hold, SystemAccount, Transfer
from tests.support.ledger_invariants import assert_ledger_invariants

pytestmark = pytest.mark.django_db


@pytest.fixture
def account(user):
    return services.account_for(user)


@pytest.fixture
def funded(account):
    services.grant(account=account, amount=10, key="seed", reason="test seed")
    account.refresh_from_db()
    return account


def balances(account):
    account.refresh_from_db()
    return account.available, account.held


def snapshot():
    return list(Account.objects.order_by("pk").values_list("pk", "available", "held"))


# --- accounts and grants ---------------------------------------------------------------


def test_account_for_creates_once(user):
    first = services.account_for(user)
    assert services.account_for(user).pk == first.pk
    assert (first.available, first.held) == (0, 0)


def test_grant_moves_credits_from_the_system_account(account):
    transfer = services.grant(account=account, amount=5, key="g1", reason="welcome")
    assert transfer.kind == Transfer.Kind.GRANT
    assert balances(account) == (5, 0)
    assert services.system_account(SystemAccount.GRANTS).available == -5
    assert_ledger_invariants()


def test_grant_retried_with_its_key_returns_the_original(account):
    first = services.grant(account=account, amount=5, key="g1", reason="welcome")
    again = services.grant(account=account, amount=5, key="g1", reason="welcome")
    assert again.pk == first.pk
    assert balances(account) == (5, 0)


@pytest.mark.parametrize("change", [{"amount": 6}, {"reason": "other"}])
def test_grant_key_reused_with_other_parameters_conflicts(account, change):
    services.grant(account=account, amount=5, key="g1", reason="welcome")
    before = snapshot()
    with pytest.raises(errors.IdempotencyConflict):
        services.grant(
            **{"account": account, "amount": 5, "key": "g1", "reason": "welcome"} | change
        )
    assert snapshot() == before


def test_key_reused_across_operations_conflicts(funded):
    before = snapshot()
    with pytest.raises(errors.IdempotencyConflict):
        services.authorize(account=funded, amount=1, key="seed", reference="r")
    assert snapshot() == before


@pytest.mark.parametrize("amount", [0, -1, 1.5, "3", True, None])
def test_amounts_must_be_positive_integers(funded, amount):
    before = snapshot()
    with pytest.raises(errors.InvalidAmount):
        services.grant(account=funded, amount=amount, key="bad", reason="x")
    with pytest.raises(errors.InvalidAmount):
        services.authorize(account=funded, amount=amount, key="bad2", reference="x")
    assert snapshot() == before


def test_revoke_takes_available_credits_back(funded):
    services.revoke(account=funded, amount=4, key="r1", reason="refund")
    assert balances(funded) == (6, 0)
    assert services.system_account(SystemAccount.REFUNDS).available == 4
    assert_ledger_invariants()


def test_revoke_never_goes_below_zero(funded):
    services.authorize(account=funded, amount=8, key="h", reference="render")
    before = snapshot()
    with pytest.raises(errors.InsufficientCredits) as exc:
        services.revoke(account=funded, amount=3, key="r1", reason="refund")
    assert (exc.value.available, exc.value.requested) == (2, 3)
    assert snapshot() == before
    assert not Transfer.objects.filter(key="r1").exists()


# --- authorize ----------------------------------------------------------------------------


def test_authorize_moves_available_to_held(funded):
    hold = services.authorize(account=funded, amount=3, key="h1", reference="job 1 panel 1")
    assert hold.state == Hold.State.PENDING
    assert hold.key == "h1"
    assert balances(funded) == (7, 3)
    delta = hold.expires_at - timezone.now()
    assert timedelta(hours=1, minutes=59) < delta <= timedelta(hours=2)
    assert_ledger_invariants()


def test_authorize_refuses_more_than_available(funded):
    before = snapshot()
    with pytest.raises(errors.InsufficientCredits) as exc:
        services.authorize(account=funded, amount=11, key="h1", reference="x")
    assert (exc.value.available, exc.value.requested) == (10, 11)
    assert snapshot() == before
    assert not Hold.objects.exists()
    assert not Transfer.objects.filter(key="h1").exists()


def test_authorize_with_zero_credits(account):
    with pytest.raises(errors.InsufficientCredits):
        services.authorize(account=account, amount=1, key="h1", reference="x")
    assert balances(account) == (0, 0)


def test_authorize_retry_returns_the_same_hold(funded):
    first = services.authorize(account=funded, amount=3, key="h1", reference="p1")
    again = services.authorize(account=funded, amount=3, key="h1", reference="p1")
    assert again.pk == first.pk
    assert balances(funded) == (7, 3)


@pytest.mark.parametrize("change", [{"amount": 2}, {"reference": "p2"}])
def test_authorize_key_reused_with_other_parameters_conflicts(funded, change):
    services.authorize(account=funded, amount=3, key="h1", reference="p1")
    before = snapshot()
    with pytest.raises(errors.IdempotencyConflict):
        services.authorize(
            **{"account": funded, "amount": 3, "key": "h1", "reference": "p1"} | change
        )
    assert snapshot() == before


def test_authorize_key_reused_for_another_account_conflicts(funded, make_user):
    other = services.account_for(make_user())
    services.grant(account=other, amount=5, key="seed-other", reason="x")
    services.authorize(account=funded, amount=1, key="h1", reference="p1")
    with pytest.raises(errors.IdempotencyConflict):
        services.authorize(account=other, amount=1, key="h1", reference="p1")


def test_authorize_accepts_seconds_or_timedelta(funded):
    a = services.authorize(account=funded, amount=1, key="a", reference="x", expires_in=30)
    b = services.authorize(
        account=funded, amount=1, key="b", reference="x", expires_in=timedelta(minutes=5)
    )
    assert a.expires_at < b.expires_at
    assert a.expires_at - a.created_at == pytest.approx(
        timedelta(seconds=30), abs=timedelta(seconds=1)
    )


def test_operations_need_a_key(funded):
    with pytest.raises(ValueError):
        services.authorize(account=funded, amount=1, key="", reference="x")


# --- capture -------------------------------------------------------------------------------


def test_full_capture_spends_the_hold(funded):
    hold = services.authorize(account=funded, amount=3, key="h1", reference="p1")
    captured = services.capture(hold=hold)
    assert captured.state == Hold.State.CAPTURED
    assert captured.captured_amount == 3
    assert balances(funded) == (7, 0)
    assert services.system_account(SystemAccount.REVENUE).available == 3
    assert_ledger_invariants()


def test_partial_capture_releases_the_remainder(funded):
    hold = services.authorize(account=funded, amount=3, key="h1", reference="p1")
    services.capture(hold=hold, amount=1)
    assert balances(funded) == (9, 0)
    assert services.system_account(SystemAccount.REVENUE).available == 1
    hold.refresh_from_db()
    assert hold.captured_amount == 1
    assert_ledger_invariants()


@pytest.mark.parametrize("amount", [0, -1, 4])
def test_capture_amount_must_be_within_the_hold(funded, amount):
    hold = services.authorize(account=funded, amount=3, key="h1", reference="p1")
    before = snapshot()
    with pytest.raises(errors.InvalidAmount):
        services.capture(hold=hold, amount=amount)
    assert snapshot() == before
    hold.refresh_from_db()
    assert hold.state == Hold.State.PENDING


def test_capture_after_expiry_is_refused(funded):
    hold = services.authorize(account=funded, amount=1, key="h1", reference="p1", expires_in=60)
    Hold.objects.filter(pk=hold.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    before = snapshot()
    with pytest.raises(errors.HoldExpired):
        services.capture(hold=hold)
    assert snapshot() == before


def test_capture_retried_with_its_key_returns_the_original(funded):
    hold = services.authorize(account=funded, amount=3, key="h1", reference="p1")
    first = services.capture(hold=hold, amount=2, key="c1")
    again = services.capture(hold=hold, amount=2, key="c1")
    assert again.pk == first.pk and again.state == Hold.State.CAPTURED
    assert balances(funded) == (8, 0)
    assert Transfer.objects.filter(pending=hold.pending_transfer).count() == 1


def test_capture_retried_with_its_key_but_another_amount_conflicts(funded):
    hold = services.authorize(account=funded, amount=3, key="h1", reference="p1")
    services.capture(hold=hold, amount=2, key="c1")
    with pytest.raises(errors.IdempotencyConflict):
        services.capture(hold=hold, amount=3, key="c1")


def test_second_capture_without_a_key_is_refused(funded):
    hold = services.authorize(account=funded, amount=3, key="h1", reference="p1")
    services.capture(hold=hold)
    before = snapshot()
    with pytest.raises(errors.HoldAlreadyResolved) as exc:
        services.capture(hold=hold)
    assert exc.value.state == "captured"
    assert snapshot() == before


def test_capture_with_a_new_key_after_capture_is_refused(funded):
    hold = services.authorize(account=funded, amount=3, key="h1", reference="p1")
    services.capture(hold=hold, key="c1")
    with pytest.raises(errors.HoldAlreadyResolved):
        services.capture(hold=hold, key="c2")


# --- release and expiry --------------------------------------------------------------------------


def test_release_returns_the_whole_hold(funded):
    hold = services.authorize(account=funded, amount=3, key="h1", reference="p1")
    released = services.release(hold=hold, reason="cancelled")
    assert released.state == Hold.State.RELEASED
    assert released.resolution_reason == "cancelled"
    assert balances(funded) == (10, 0)
    assert services.system_account(SystemAccount.REVENUE).available == 0
    assert_ledger_invariants()


def test_release_retried_with_its_key_returns_the_original(funded):
    hold = services.authorize(account=funded, amount=3, key="h1", reference="p1")
    services.release(hold=hold, reason="cancelled", key="rel1")
    again = services.release(hold=hold, reason="cancelled", key="rel1")
    assert again.state == Hold.State.RELEASED
    assert balances(funded) == (10, 0)


@pytest.mark.parametrize(
    "first, second",
    [
        ("capture", "release"),
        ("release", "capture"),
        ("release", "release"),
    ],
)
def test_a_hold_resolves_exactly_once(funded, first, second):
    hold = services.authorize(account=funded, amount=3, key="h1", reference="p1")
    ops = {
        "capture": lambda: services.capture(hold=hold),
        "release": lambda: services.release(hold=hold, reason="x"),
    }
    ops[first]()
    before = snapshot()
    with pytest.raises(errors.HoldAlreadyResolved):
        ops[second]()
    assert snapshot() == before
    assert_ledger_invariants()


def test_release_with_a_capture_key_conflicts(funded):
    hold = services.authorize(account=funded, amount=3, key="h1", reference="p1")
    services.capture(hold=hold, key="k")
    with pytest.raises(errors.IdempotencyConflict):
        services.release(hold=hold, reason="x", key="k")


def test_release_after_expiry_time_is_allowed(funded):
    hold = services.authorize(account=funded, amount=2, key="h1", reference="p1")
    Hold.objects.filter(pk=hold.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    services.release(hold=hold, reason="late cancel")
    assert balances(funded) == (10, 0)


def test_sweep_expires_stale_holds_oldest_first(funded):
    now = timezone.now()
    holds = [
        services.authorize(account=funded, amount=1, key=f"h{i}", reference=f"p{i}", expires_in=60)
        for i in range(4)
    ]
    # Expiry order differs from creation order on purpose.
    for hold, minutes_ago in zip(holds, [5, 30, 10, -10], strict=True):
        Hold.objects.filter(pk=hold.pk).update(expires_at=now - timedelta(minutes=minutes_ago))

    assert services.expire_stale_holds(now=now) == 3
    expired = Hold.objects.filter(state=Hold.State.EXPIRED).order_by("resolution_transfer__pk")
    assert [h.pk for h in expired] == [holds[1].pk, holds[2].pk, holds[0].pk]
    assert Hold.objects.get(pk=holds[3].pk).state == Hold.State.PENDING
    assert balances(funded) == (9, 1)
    assert_ledger_invariants()


def test_sweep_is_idempotent(funded):
    hold = services.authorize(account=funded, amount=2, key="h1", reference="p1", expires_in=1)
    later = timezone.now() + timedelta(seconds=5)
    assert services.expire_stale_holds(now=later) == 1
    assert services.expire_stale_holds(now=later) == 0
    assert balances(funded) == (10, 0)
    hold.refresh_from_db()
    assert hold.state == Hold.State.EXPIRED


def test_an_expired_hold_cannot_be_captured_or_released(funded):
    hold = services.authorize(account=funded, amount=2, key="h1", reference="p1", expires_in=1)
    services.expire_stale_holds(now=timezone.now() + timedelta(seconds=5))
    with pytest.raises(errors.HoldExpired):
        services.capture(hold=hold)
    with pytest.raises(errors.HoldAlreadyResolved):
        services.capture(hold=hold)
    with pytest.raises(errors.HoldAlreadyResolved):
        services.release(hold=hold, reason="x")


def test_sweep_leaves_fresh_and_resolved_holds_alone(funded):
    fresh = services.authorize(account=funded, amount=1, key="f", reference="x")
    done = services.authorize(account=funded, amount=1, key="d", reference="x", expires_in=1)
    services.capture(hold=done)
    assert services.expire_stale_holds(now=timezone.now() + timedelta(seconds=5)) == 0
    fresh.refresh_from_db()
    assert fresh.state == Hold.State.PENDING


# --- the journal and the database's own guards ---------------------------------------


def test_check_constraints_refuse_negative_balances(funded):
    with pytest.raises(IntegrityError), transaction.atomic():
        Account.objects.filter(pk=funded.pk).update(available=-1)
    with pytest.raises(IntegrityError), transaction.atomic():
        Account.objects.filter(pk=funded.pk).update(held=-1)


def test_database_refuses_a_second_resolution_row(funded):
    hold = services.authorize(account=funded, amount=1, key="h1", reference="p1")
    services.release(hold=hold, reason="x")
    revenue = services.system_account(SystemAccount.REVENUE)
    with pytest.raises(IntegrityError), transaction.atomic():
        Transfer.objects.create(
            key="sneaky",
            kind=Transfer.Kind.POST,
            debit_account=funded,
            credit_account=revenue,
            amount=1,
            pending=hold.pending_transfer,
        )


def test_journal_is_append_only(funded):
    """A trigger refuses UPDATE and DELETE of the journal, on PostgreSQL and SQLite."""
    transfer = Transfer.objects.get(key="seed")
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        Transfer.objects.filter(pk=transfer.pk).update(amount=1000)
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        Transfer.objects.filter(pk=transfer.pk).delete()
    with (
        pytest.raises(IntegrityError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("UPDATE ledger_transfer SET reason = 'x' WHERE id = %s", [transfer.pk])
    assert Transfer.objects.get(pk=transfer.pk).amount == 10
