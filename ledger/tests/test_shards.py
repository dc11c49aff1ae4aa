"""System accounts keep their balance in shards: no row every capture waits on.

The operator's accounts (revenue, grants, purchases, refunds) are touched by
every capture, grant or refund. Their balance is split over a fixed number of
shard rows, the shard chosen by the user account on the other side, so two
people's captures never wait on one row; reconciliation, admin and
`system_account()` still show one figure per system account.
"""

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from ledger import selectors, services
from ledger.models import SYSTEM_SHARDS, Account, BalanceShard, SystemAccount
from tests.support.ledger_invariants import assert_ledger_invariants


def spend(account, *, captured: int, released: int, tag: str) -> None:
    for i in range(captured):
        hold = services.authorize(account=account, amount=1, key=f"{tag}-c{i}", reference="r")
        services.capture(hold=hold)
    for i in range(released):
        hold = services.authorize(account=account, amount=1, key=f"{tag}-r{i}", reference="r")
        services.release(hold=hold, reason="cancelled")


@pytest.mark.django_db
def test_captures_by_different_people_land_in_different_shards(make_user):
    accounts = [services.account_for(make_user()) for _ in range(4)]
    for n, account in enumerate(accounts):
        services.grant(account=account, amount=5, key=f"seed-{n}", reason="seed")
        spend(account, captured=n + 1, released=1, tag=f"a{n}")

    revenue = services.system_account(SystemAccount.REVENUE)
    assert revenue.available == 1 + 2 + 3 + 4
    shards = BalanceShard.objects.filter(account__code=SystemAccount.REVENUE)
    assert {s.shard for s in shards if s.available} == {a.pk % SYSTEM_SHARDS for a in accounts}
    assert sum(s.available for s in shards) == 10
    assert services.system_account(SystemAccount.GRANTS).available == -20
    # The system account's own row carries no balance: every figure is in its shards.
    assert Account.objects.get(code=SystemAccount.REVENUE).available == 0
    assert [m for m in selectors.reconciliation() if m.kind != "stale_hold"] == []
    assert_ledger_invariants()


@pytest.mark.django_db
def test_the_database_refuses_a_balance_on_a_system_account_row():
    services.system_account(SystemAccount.REVENUE)
    with pytest.raises(IntegrityError), transaction.atomic():
        Account.objects.filter(code=SystemAccount.REVENUE).update(available=5)


@pytest.mark.django_db
def test_reconciliation_sees_a_corrupted_shard(make_user):
    account = services.account_for(make_user())
    services.grant(account=account, amount=3, key="seed", reason="seed")
    spend(account, captured=2, released=0, tag="x")
    BalanceShard.objects.filter(account__code=SystemAccount.REVENUE).update(available=7)
    found = selectors.reconciliation()
    assert any(m.kind == "balance" and m.subject == "system:revenue" for m in found), found


@pytest.mark.django_db
def test_admin_shows_one_figure_per_system_account(make_user, client):
    client.force_login(make_user("operator", is_staff=True, is_superuser=True))
    for n in range(3):
        account = services.account_for(make_user())
        services.grant(account=account, amount=50, key=f"seed-{n}", reason="seed")
        spend(account, captured=11 * (n + 1), released=0, tag=f"p{n}")
    revenue = Account.objects.get(code=SystemAccount.REVENUE)
    page = client.get(reverse("admin:ledger_account_changelist")).content.decode()
    assert page.count(">system:revenue</a>") == 1
    row = page[page.index(">system:revenue</a>") :].split("</tr>")[0]
    assert '<td class="field-balance">66</td>' in row, row  # 11 + 22 + 33, over its shards
    assert client.get(reverse("admin:ledger_account_change", args=[revenue.pk])).status_code == 200
    assert "All reconciled." in client.get(reverse("admin:ledger_reconciliation")).content.decode()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_parallel_captures_by_many_people_add_up_exactly(make_user, race):
    """Many people's captures, grants and releases at once: exact totals after."""
    people = 48
    accounts = [services.account_for(make_user()) for _ in range(people)]
    for n, account in enumerate(accounts):
        services.grant(account=account, amount=6, key=f"seed-{n}", reason="seed")
    holds = [
        services.authorize(account=a, amount=2 + n % 2, key=f"h-{n}", reference="render")
        for n, a in enumerate(accounts)
    ]
    calls = []
    for n, hold in enumerate(holds):
        if n % 4 == 3:
            calls.append(lambda h=hold: services.release(hold=h, reason="cancel"))
        else:
            calls.append(lambda h=hold, n=n: services.capture(hold=h, amount=1 + n % 2))
        calls.append(
            lambda a=accounts[n], n=n: services.grant(account=a, amount=2, key=f"g-{n}", reason="x")
        )
    results = race(calls)
    assert not [r for r in results if isinstance(r, Exception)], results

    captured = sum(1 + n % 2 for n in range(people) if n % 4 != 3)
    assert services.system_account(SystemAccount.REVENUE).available == captured
    assert services.system_account(SystemAccount.GRANTS).available == -people * (6 + 2)
    revenue_shards = BalanceShard.objects.filter(account__code=SystemAccount.REVENUE)
    assert revenue_shards.count() > 1
    assert Account.objects.get(code=SystemAccount.REVENUE).available == 0
    for n, account in enumerate(accounts):
        account.refresh_from_db()
        spent = 0 if n % 4 == 3 else 1 + n % 2
        assert (account.available, account.held) == (8 - spent, 0)
    assert [m for m in selectors.reconciliation() if m.kind != "stale_hold"] == []
    assert_ledger_invariants()
