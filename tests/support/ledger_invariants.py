"""An independent recomputation of the ledger from its journal, for tests.

Deliberately not the app's own selectors: the tests check the code against
arithmetic done here, row by row.
"""

from collections import defaultdict

from ledger.models import Account, BalanceShard, Hold, Transfer


def journal_balances() -> dict[int, tuple[int, int]]:
    available: dict[int, int] = defaultdict(int)
    held: dict[int, int] = defaultdict(int)
    resolved = set(
        Transfer.objects.filter(kind__in=["post", "void"]).values_list("pending_id", flat=True)
    )
    for t in Transfer.objects.order_by("pk"):
        if t.kind in ("grant", "revoke", "post"):
            available[t.debit_account_id] -= t.amount
            available[t.credit_account_id] += t.amount
        elif t.kind == "pending" and t.pk not in resolved:
            available[t.debit_account_id] -= t.amount
            held[t.debit_account_id] += t.amount
    return {a: (available[a], held[a]) for a in Account.objects.values_list("pk", flat=True)}


def cached_balances() -> dict[int, tuple[int, int]]:
    """Each account's cached (available, held): its row plus its shards."""
    cached = {a.pk: (a.available, a.held) for a in Account.objects.all()}
    for shard in BalanceShard.objects.all():
        available, held = cached[shard.account_id]
        cached[shard.account_id] = (available + shard.available, held)
    return cached


def assert_ledger_invariants() -> None:
    journal = journal_balances()
    cached = cached_balances()
    total = 0
    for account in Account.objects.all():
        if account.kind == Account.Kind.SYSTEM:
            # a system account's balance lives in its shards, never in its row
            assert (account.available, account.held) == (0, 0), account
        account.available, account.held = cached[account.pk]
        # 1. never negative (users), held never negative (anyone)
        assert account.held >= 0, account
        if account.kind == Account.Kind.USER:
            assert account.available >= 0, account
        # 3. cached balances equal what the journal recomputes
        assert (account.available, account.held) == journal[account.pk], (
            account,
            (account.available, account.held),
            journal[account.pk],
        )
        # 2. held equals the sum of open holds
        open_sum = sum(
            Hold.objects.filter(account=account, state="pending").values_list("amount", flat=True)
        )
        assert account.held == open_sum, (account, account.held, open_sum)
        total += account.available + account.held
    # 2. conservation: double entry sums to zero
    assert total == 0, total
    # 4. every hold's state agrees with the journal, resolved exactly once
    for hold in Hold.objects.select_related("pending_transfer", "resolution_transfer"):
        resolutions = list(Transfer.objects.filter(pending=hold.pending_transfer))
        if hold.state == "pending":
            assert resolutions == [], hold
        else:
            assert resolutions == [hold.resolution_transfer], hold
            expected_kind = "post" if hold.state == "captured" else "void"
            assert hold.resolution_transfer.kind == expected_kind, hold
        if hold.state == "captured":
            assert 0 < hold.captured_amount <= hold.amount
