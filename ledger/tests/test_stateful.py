"""A property-based stateful test: random operations against a shadow model.

Hypothesis drives grants, revocations, authorizations, captures, releases,
sweeps and retries (keys drawn from a small pool, so replays and conflicts
happen often), predicts each outcome from a plain-Python model, and checks
every invariant of docs/architecture.md after every step.
"""

from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test import override_settings
from django.utils import timezone
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    rule,
    run_state_machine_as_test,
)

from ledger import errors, services
from ledger.models import Account, Hold
from tests.support.ledger_invariants import assert_ledger_invariants

KEYS = st.sampled_from([f"k{i}" for i in range(12)])


@dataclass
class ShadowHold:
    account: int
    amount: int
    state: str = "pending"
    expires_at: object = None


@dataclass
class Shadow:
    available: dict[int, int] = field(default_factory=dict)
    held: dict[int, int] = field(default_factory=dict)
    holds: dict[int, ShadowHold] = field(default_factory=dict)
    keys: dict[str, tuple] = field(default_factory=dict)
    auto_resolved: set[int] = field(default_factory=set)


class LedgerMachine(RuleBasedStateMachine):
    accounts = Bundle("accounts")
    holds = Bundle("holds")

    def __init__(self):
        super().__init__()
        self._atomic = transaction.atomic()
        self._atomic.__enter__()
        self.model = Shadow()
        self.users = 0

    def teardown(self):
        transaction.set_rollback(True)
        self._atomic.__exit__(None, None, None)

    # --- helpers ---------------------------------------------------------------

    def expect_key(self, key: str, signature: tuple):
        """'new', 'replay' or 'conflict' for using `key` with `signature`."""
        seen = self.model.keys.get(key)
        if seen is None:
            return "new"
        return "replay" if seen == signature else "conflict"

    def balances_unchanged(self, before):
        assert before == list(Account.objects.order_by("pk").values_list("pk", "available", "held"))

    def snapshot(self):
        return list(Account.objects.order_by("pk").values_list("pk", "available", "held"))

    # --- rules ---------------------------------------------------------------------

    @initialize(target=accounts)
    def open_funded_accounts(self):
        funded = []
        for credits in (6, 12):
            account = self.open_account()
            services.grant(account=account, amount=credits, key=f"seed-{account.pk}", reason="s")
            self.model.available[account.pk] = credits
            funded.append(account)
        return multiple(*funded)

    @rule(target=accounts)
    def open_account(self):
        self.users += 1
        user = get_user_model().objects.create(username=f"u{self.users}")
        account = services.account_for(user)
        self.model.available[account.pk] = 0
        self.model.held[account.pk] = 0
        return account

    @rule(account=accounts, amount=st.integers(1, 8), key=KEYS, reason=st.sampled_from("ab"))
    def grant(self, account, amount, key, reason):
        verdict = self.expect_key(key, ("grant", account.pk, amount, reason))
        before = self.snapshot()
        if verdict == "conflict":
            with pytest.raises(errors.IdempotencyConflict):
                services.grant(account=account, amount=amount, key=key, reason=reason)
            return self.balances_unchanged(before)
        services.grant(account=account, amount=amount, key=key, reason=reason)
        if verdict == "new":
            self.model.available[account.pk] += amount
            self.model.keys[key] = ("grant", account.pk, amount, reason)

    @rule(account=accounts, amount=st.integers(1, 8), key=KEYS)
    def revoke(self, account, amount, key):
        verdict = self.expect_key(key, ("revoke", account.pk, amount, "refund"))
        before = self.snapshot()
        if verdict == "conflict":
            with pytest.raises(errors.IdempotencyConflict):
                services.revoke(account=account, amount=amount, key=key, reason="refund")
            return self.balances_unchanged(before)
        if verdict == "new" and self.model.available[account.pk] < amount:
            with pytest.raises(errors.InsufficientCredits):
                services.revoke(account=account, amount=amount, key=key, reason="refund")
            return self.balances_unchanged(before)
        services.revoke(account=account, amount=amount, key=key, reason="refund")
        if verdict == "new":
            self.model.available[account.pk] -= amount
            self.model.keys[key] = ("revoke", account.pk, amount, "refund")

    @rule(
        target=holds,
        account=accounts,
        amount=st.integers(1, 4),
        key=KEYS,
        minutes=st.sampled_from([10, 20, 30]),
    )
    def authorize(self, account, amount, key, minutes):
        signature = ("pending", account.pk, amount, "render")
        verdict = self.expect_key(key, signature)
        before = self.snapshot()
        call = {
            "account": account,
            "amount": amount,
            "key": key,
            "reference": "render",
            "expires_in": timedelta(minutes=minutes),
        }
        if verdict == "conflict":
            with pytest.raises(errors.IdempotencyConflict):
                services.authorize(**call)
            self.balances_unchanged(before)
            return multiple()
        if verdict == "new" and self.model.available[account.pk] < amount:
            with pytest.raises(errors.InsufficientCredits):
                services.authorize(**call)
            self.balances_unchanged(before)
            return multiple()
        hold = services.authorize(**call)
        if verdict == "replay":
            self.balances_unchanged(before)
            return hold
        self.model.available[account.pk] -= amount
        self.model.held[account.pk] += amount
        self.model.holds[hold.pk] = ShadowHold(account.pk, amount, expires_at=hold.expires_at)
        self.model.keys[key] = signature
        return hold

    def _resolve(self, hold, *, kind, amount, key):
        shadow = self.model.holds[hold.pk]
        before = self.snapshot()
        if kind == "post":
            call = lambda: services.capture(hold=hold, amount=amount, key=key)  # noqa: E731
        else:
            call = lambda: services.release(hold=hold, reason="r", key=key)  # noqa: E731
        full = shadow.amount if amount is None else amount
        if key is not None:
            verdict = self.expect_key(key, (kind, hold.pk, full))
            if verdict == "conflict":
                with pytest.raises(errors.IdempotencyConflict):
                    call()
                return self.balances_unchanged(before)
            if verdict == "replay":
                assert call().state == shadow.state
                return self.balances_unchanged(before)
        if shadow.state != "pending":
            with pytest.raises(errors.HoldAlreadyResolved):
                call()
            return self.balances_unchanged(before)
        if full > shadow.amount:
            event("capture too large")
            with pytest.raises(errors.InvalidAmount):
                call()
            return self.balances_unchanged(before)
        result = call()
        event(f"resolved {kind}")
        spent = full if kind == "post" else 0
        shadow.state = "captured" if kind == "post" else "released"
        assert result.state == shadow.state
        self.model.held[shadow.account] -= shadow.amount
        self.model.available[shadow.account] += shadow.amount - spent
        if key is not None:
            self.model.keys[key] = (kind, hold.pk, full)

    @rule(
        hold=holds,
        amount=st.none() | st.integers(1, 5),
        key=st.none() | KEYS,
    )
    def capture(self, hold, amount, key):
        self._resolve(hold, kind="post", amount=amount, key=key)

    @rule(hold=holds, key=st.none() | KEYS)
    def release(self, hold, key):
        self._resolve(hold, kind="void", amount=None, key=key)

    @rule(minutes=st.sampled_from([0, 15, 25, 35]))
    def sweep(self, minutes):
        now = timezone.now() + timedelta(minutes=minutes)
        stale = [
            pk for pk, h in self.model.holds.items() if h.state == "pending" and h.expires_at <= now
        ]
        assert services.expire_stale_holds(now=now) == len(stale)
        event(f"swept {min(len(stale), 2)}")
        for pk in stale:
            shadow = self.model.holds[pk]
            shadow.state = "expired"
            self.model.held[shadow.account] -= shadow.amount
            self.model.available[shadow.account] += shadow.amount

    # --- invariants ------------------------------------------------------------------

    @invariant()
    def matches_the_model_and_the_journal(self):
        for account in Account.objects.filter(kind=Account.Kind.USER):
            expected = (self.model.available[account.pk], self.model.held[account.pk])
            assert (account.available, account.held) == expected
        for hold in Hold.objects.all():
            assert hold.state == self.model.holds[hold.pk].state
        assert_ledger_invariants()


@pytest.mark.django_db
@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "plain-path"])
def test_ledger_state_machine(fast):
    """The fast path (PostgreSQL's stored functions) and the plain path (the ORM)
    must both satisfy the model."""
    if fast and connection.vendor != "postgresql":
        pytest.skip("the fast path is PostgreSQL's; SQLite takes the plain path")
    with override_settings(LEDGER_FAST_PATH=fast):
        run_state_machine_as_test(
            LedgerMachine,
            settings=settings(
                max_examples=40,
                stateful_step_count=40,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
            ),
        )
