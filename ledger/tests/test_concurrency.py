"""Races on PostgreSQL: real connections, real row locks, threads released together."""

from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from ledger import errors, services
from ledger.models import Hold
from tests.support.ledger_invariants import assert_ledger_invariants

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def kinds(results) -> Counter:
    return Counter(type(r).__name__ for r in results)


@pytest.fixture
def account(make_user):
    return services.account_for(make_user())


def test_fifty_tabs_racing_for_ten_credits(account, race):
    services.grant(account=account, amount=10, key="seed", reason="seed")
    results = race(
        [
            lambda i=i: services.authorize(account=account, amount=1, key=f"tab-{i}", reference="r")
            for i in range(50)
        ]
    )
    assert kinds(results) == {"Hold": 10, "InsufficientCredits": 40}
    account.refresh_from_db()
    assert (account.available, account.held) == (0, 10)
    assert Hold.objects.filter(account=account).count() == 10
    assert_ledger_invariants()


def test_twin_requests_with_one_key_place_one_hold(account, race):
    services.grant(account=account, amount=10, key="seed", reason="seed")
    results = race(
        [
            lambda: services.authorize(account=account, amount=2, key="same", reference="r")
            for _ in range(12)
        ]
    )
    assert kinds(results) == {"Hold": 12}
    assert len({h.pk for h in results}) == 1
    account.refresh_from_db()
    assert (account.available, account.held) == (8, 2)
    assert_ledger_invariants()


def test_twin_grants_with_one_key_grant_once(account, race):
    results = race(
        [
            lambda: services.grant(account=account, amount=5, key="stripe:cs_1", reason="pack")
            for _ in range(12)
        ]
    )
    assert len({t.pk for t in results}) == 1
    account.refresh_from_db()
    assert account.available == 5


def test_capture_racing_release_exactly_one_wins(account, race):
    services.grant(account=account, amount=20, key="seed", reason="seed")
    for round_ in range(20):
        hold = services.authorize(account=account, amount=1, key=f"h{round_}", reference="r")
        results = race(
            [
                lambda h=hold: services.capture(hold=h),
                lambda h=hold: services.release(hold=h, reason="cancel"),
            ]
        )
        winners = [r for r in results if isinstance(r, Hold)]
        losers = [r for r in results if isinstance(r, errors.HoldAlreadyResolved)]
        assert len(winners) == 1 and len(losers) == 1, results
    assert_ledger_invariants()


def test_sweep_racing_captures_resolves_each_hold_once(account, race):
    services.grant(account=account, amount=30, key="seed", reason="seed")
    holds = [
        services.authorize(account=account, amount=1, key=f"h{i}", reference="r", expires_in=600)
        for i in range(30)
    ]
    # The sweep sees every hold as stale; the captures see them as fresh.
    later = timezone.now() + timedelta(hours=1)
    calls = [lambda h=h: services.capture(hold=h) for h in holds]
    calls += [lambda: services.expire_stale_holds(now=later) for _ in range(3)]
    results = race(calls)

    captures, sweeps = results[:30], results[30:]
    assert all(isinstance(r, int) for r in sweeps), sweeps
    captured = sum(isinstance(r, Hold) for r in captures)
    refused = sum(isinstance(r, errors.HoldAlreadyResolved) for r in captures)
    assert captured + refused == 30, captures
    # Skipped (locked) holds are left for the next sweep.
    expired = sum(sweeps) + services.expire_stale_holds(now=later)
    assert captured + expired == 30
    states = Counter(Hold.objects.values_list("state", flat=True))
    assert states == +Counter({"captured": captured, "expired": expired})
    assert_ledger_invariants()
