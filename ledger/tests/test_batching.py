"""Group commit: concurrent operations on one account share one statement and one commit.

The combiner is tested on its own (no database: who leads, who waits, what
each caller gets back, what happens when a batch fails) and on PostgreSQL,
where the first operation is made to wait on the account's row lock so that
the others queue behind it: a real `ledger_batch` call, whose effects must be
exactly those of the same operations one by one.
"""

import threading

import psycopg
import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from ledger import batching, errors, fast_path, services
from ledger.models import Account, BalanceShard, Hold, Transfer, shard_for
from tests.support.ledger_invariants import assert_ledger_invariants
from tests.support.waiting import wait_for


def operation(n: int, run_alone) -> batching.Operation:
    return batching.Operation(op="a", account_id=1, run_alone=run_alone, key=f"k{n}")


class FakeStatements:
    """Stands in for the database: the first statement blocks until released."""

    def __init__(self, *, fail_batches: bool = False):
        self.release_first = threading.Event()
        self.batches: list[list[str]] = []
        self.alone: list[str] = []
        self.fail_batches = fail_batches
        self._first = True
        self._mutex = threading.Lock()

    def alone_for(self, key: str, *, error: Exception | None = None):
        def run(db):
            with self._mutex:
                first, self._first = self._first, False
            if first:
                assert self.release_first.wait(20)
            self.alone.append(key)
            if error is not None:
                raise error
            return ("row", key)

        return run

    def run_batch(self, db, operations):
        self.batches.append([o.key for o in operations])
        if self.fail_batches:
            raise RuntimeError("the batch statement failed")
        return [("batched row", o.key) for o in operations]


def lead_then_queue(combiner, fake, operations) -> dict[str, object]:
    """The first operation leads and blocks on the wire; the others queue behind
    it; then it is released. Returns each caller's row or error, by key."""
    results: dict[str, object] = {}

    def call(op):
        try:
            results[op.key] = combiner.run(op)
        except Exception as exc:
            results[op.key] = exc

    threads = [threading.Thread(target=call, args=(op,)) for op in operations]
    threads[0].start()
    wait_for(lambda: combiner._busy, what="the first caller to lead")
    for t in threads[1:]:
        t.start()
    queued = len(operations) - 1
    wait_for(lambda: len(combiner._queue) == queued, what=f"{queued} callers queued")
    fake.release_first.set()
    for t in threads:
        t.join(20)
    return results


def test_a_lone_caller_runs_its_statement_alone_at_once():
    fake = FakeStatements()
    fake.release_first.set()
    combiner = batching.Combiner("default", fake.run_batch, ("default", 1))
    assert combiner.run(operation(0, fake.alone_for("k0"))) == ("row", "k0")
    assert fake.alone == ["k0"] and fake.batches == []


def test_callers_arriving_during_a_statement_share_the_next_one():
    fake = FakeStatements()
    combiner = batching.Combiner("default", fake.run_batch, ("default", 1))
    ops = [operation(n, fake.alone_for(f"k{n}")) for n in range(5)]
    results = lead_then_queue(combiner, fake, ops)

    assert fake.alone == ["k0"]
    assert len(fake.batches) == 1 and sorted(fake.batches[0]) == ["k1", "k2", "k3", "k4"]
    assert results == {"k0": ("row", "k0")} | {
        f"k{n}": ("batched row", f"k{n}") for n in range(1, 5)
    }
    assert not combiner._busy and combiner._queue == []


def test_a_failed_batch_runs_each_operation_alone_and_each_caller_gets_its_own_error(caplog):
    fake = FakeStatements(fail_batches=True)
    combiner = batching.Combiner("default", fake.run_batch, ("default", 1))
    refusal = errors.InsufficientCredits(available=0, requested=1)
    ops = [operation(0, fake.alone_for("k0"))]
    ops += [
        operation(n, fake.alone_for(f"k{n}", error=refusal if n == 2 else None))
        for n in range(1, 4)
    ]
    results = lead_then_queue(combiner, fake, ops)

    assert len(fake.batches) == 1  # tried once, then each alone
    assert sorted(fake.alone) == ["k0", "k1", "k2", "k3"]
    assert results["k2"] is refusal
    assert results["k1"] == ("row", "k1") and results["k3"] == ("row", "k3")
    # A batch that fails for no expected reason says so: the fallback keeps
    # every caller right, and must not hide a broken batch statement.
    [warning] = [r for r in caplog.records if r.name == "ledger.batching"]
    assert warning.levelname == "WARNING" and "the batch statement failed" in warning.message


def test_a_caller_inside_a_transaction_never_waits_for_the_combiner(settings, monkeypatch):
    called = []
    monkeypatch.setattr(batching.Combiner, "run", lambda self, op: called.append(op))

    class InTransaction:
        in_atomic_block = True

    monkeypatch.setattr(fast_path, "_fetch", lambda db, sql, params: ("done", None, None, None))
    monkeypatch.setattr(fast_path, "_hold", lambda db, values: None)
    fast_path.resolve(
        InTransaction(),
        hold_id=1,
        account_id=1,
        kind="void",
        state="released",
        amount=None,
        key="k",
        explicit_key=False,
        reason="",
        actor_id=None,
        now=None,
    )
    assert called == []


# --- on PostgreSQL ---------------------------------------------------------------


def batched_capture(hold: Hold) -> batching.Operation:
    """A full capture of `hold` as the combiner hands it to ledger_batch."""
    return batching.Operation(
        op="r",
        account_id=hold.account_id,
        run_alone=lambda db: (),
        hold_id=hold.pk,
        amount=None,
        key=f"hold:{hold.pk}:resolve",
        now=timezone.now(),
        kind="post",
        state="captured",
        reason="",
    )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_queued_operations_on_one_account_commit_together_with_exact_effects(
    make_user, monkeypatch
):
    account = services.account_for(make_user())
    services.grant(account=account, amount=5, key="seed", reason="seed")
    sizes: list[int] = []
    real_run_batch = fast_path.run_batch

    def counting_run_batch(db, operations):
        sizes.append(len(operations))
        return real_run_batch(db, operations)

    monkeypatch.setattr(fast_path, "run_batch", counting_run_batch)

    # Another connection holds the account's row: the first authorize waits
    # on it with its statement on the wire, and the rest queue behind it.
    blocker = psycopg.connect(_dsn())
    blocker.execute("SELECT 1 FROM ledger_account WHERE id = %s FOR UPDATE", [account.pk])
    results: dict[int, object] = {}

    def place(n: int) -> None:
        try:
            results[n] = services.authorize(
                account=account, amount=1, key=f"tab-{n}", reference="r"
            )
        except Exception as exc:
            results[n] = exc
        finally:
            connection.close()

    first = threading.Thread(target=place, args=(0,))
    first.start()
    combiner = lambda: batching.live_combiners.get(("default", account.pk))  # noqa: E731
    wait_for(lambda: combiner() is not None and combiner()._busy, what="the first to lead")
    others = [threading.Thread(target=place, args=(n,)) for n in range(1, 8)]
    for t in others:
        t.start()
    wait_for(lambda: len(combiner()._queue) == 7, what="seven operations queued")
    blocker.rollback()
    blocker.close()
    for t in [first, *others]:
        t.join(30)

    assert sizes == [7]  # one statement, one commit, for the seven that queued
    holds = [r for r in results.values() if isinstance(r, Hold)]
    refused = [r for r in results.values() if isinstance(r, errors.InsufficientCredits)]
    assert (len(holds), len(refused)) == (5, 3), results
    account.refresh_from_db()
    assert (account.available, account.held) == (0, 5)
    assert Transfer.objects.filter(kind=Transfer.Kind.PENDING).count() == 5

    # Captures queued the same way: each hold captured once, revenue exact.
    for hold in holds:
        services.capture(hold=hold)
    account.refresh_from_db()
    assert (account.available, account.held) == (0, 0)
    assert services.system_account("revenue").available == 5
    assert_ledger_invariants()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_batch_binds_ids_past_the_smallint_range(make_user):
    """Account ids are small and hold ids grow: the batch's int8[] arrays must
    bind whatever their values (psycopg once typed them all by the first one)."""
    account = services.account_for(make_user())
    services.grant(account=account, amount=2, key="seed", reason="seed")
    with connection.cursor() as cursor:
        cursor.execute("SELECT setval('ledger_hold_id_seq', 70000)")
    holds = [
        services.authorize(account=account, amount=1, key=f"big-{n}", reference="r")
        for n in range(2)
    ]
    assert min(h.pk for h in holds) > 32767 > account.pk
    rows = fast_path.run_batch(connection, [batched_capture(hold) for hold in holds])
    assert [row[0] for row in rows] == ["done", "done"]
    account.refresh_from_db()
    assert (account.available, account.held) == (0, 0)
    assert services.system_account("revenue").available == 2
    assert_ledger_invariants()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_batch_takes_its_holds_before_any_account_as_the_sweep_does(make_user):
    """A batch of two captures pauses holding the account (a capture on another
    account holds the revenue shard); the sweep comes for the second hold,
    which has gone stale. The batch must already hold it, so the sweep skips
    it: before, the sweep took the hold, waited for the account, and the two
    deadlocked."""
    account = services.account_for(make_user())
    services.grant(account=account, amount=10, key="seed", reason="seed")
    services.capture(
        hold=services.authorize(account=account, amount=1, key="first", reference="r")
    )  # the account's revenue shard row exists
    fresh = services.authorize(account=account, amount=1, key="fresh", reference="r")
    stale = services.authorize(account=account, amount=1, key="stale", reference="r", expires_in=-5)
    shard = BalanceShard.objects.get(
        account=services.system_account("revenue"), shard=shard_for(account.pk)
    )
    blocker = psycopg.connect(_dsn())
    blocker.execute("SELECT 1 FROM ledger_balanceshard WHERE id = %s FOR UPDATE", [shard.pk])
    watcher = psycopg.connect(_dsn(), autocommit=True)

    def waiting_on_locks() -> int:
        return watcher.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE wait_event_type = 'Lock' AND datname = current_database()"
        ).fetchone()[0]

    outcome: dict[str, object] = {}

    def run(name: str, call) -> None:
        try:
            outcome[name] = call()
        except Exception as exc:
            outcome[name] = exc
        finally:
            connection.close()

    batch = threading.Thread(
        target=run,
        args=(
            "batch",
            lambda: fast_path.run_batch(
                connection, [batched_capture(fresh), batched_capture(stale)]
            ),
        ),
    )
    batch.start()
    wait_for(lambda: waiting_on_locks() == 1, what="the batch to wait for the shard")
    sweep = threading.Thread(target=run, args=("sweep", services.expire_stale_holds))
    sweep.start()
    wait_for(
        lambda: "sweep" in outcome or waiting_on_locks() == 2,
        what="the sweep to finish or to wait",
    )
    blocker.rollback()
    blocker.close()
    batch.join(30)
    sweep.join(30)
    watcher.close()

    assert outcome["sweep"] == 0, outcome  # the stale hold was the batch's: skipped
    assert [row[0] for row in outcome["batch"]] == ["done", "expired"], outcome
    assert services.expire_stale_holds() == 1  # the next sweep releases it
    assert_ledger_invariants()


def _dsn() -> str:
    params = connection.get_connection_params()
    params.pop("context", None)
    params.pop("cursor_factory", None)
    params.pop("prepare_threshold", None)
    return psycopg.conninfo.make_conninfo(**{k: v for k, v in params.items() if v is not None})


@pytest.mark.django_db
def test_accounts_are_permanent(make_user):
    account = services.account_for(make_user())
    with pytest.raises(IntegrityError), transaction.atomic():
        Account.objects.filter(pk=account.pk).delete()
    assert Account.objects.filter(pk=account.pk).exists()
