"""The PostgreSQL fast path: each hold operation is one statement, one round trip.

The ledger's own stored functions (migration 0006) do what the plain path
does in Python, in the same lock order, inside one statement. These tests pin
the round trips and the refusals; every other test in this package runs
against the fast path too on PostgreSQL (the stateful machine on both paths).
"""

import tempfile

import pytest
from django.db import connection, transaction
from psycopg import pq

from ledger import errors, fast_path, services
from ledger.models import Hold, SystemAccount, Transfer
from tests.support.ledger_invariants import assert_ledger_invariants

pytestmark = pytest.mark.postgres


@pytest.fixture
def funded(make_user):
    account = services.account_for(make_user())
    services.grant(account=account, amount=10, key="seed", reason="seed")
    return account


def round_trips(call):
    """`call`'s result and the statements it sent, one per round trip, read
    from libpq's own trace of this connection (BEGIN and COMMIT included)."""
    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    with tempfile.TemporaryFile() as trace:
        pgconn.trace(trace.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            result = call()
        finally:
            pgconn.untrace()
        trace.seek(0)
        lines = trace.read().decode(errors="replace").splitlines()
    # A simple Query, or an extended-protocol batch ending in Sync: one round trip each.
    sent = [
        line for line in lines if line.startswith("F") and ("\tQuery" in line or "\tSync" in line)
    ]
    # A statement is parsed (and analysed) by the server only when prepared:
    # once per connection, not once per call.
    assert not any(line.startswith("F") and "\tParse" in line for line in lines), lines
    return result, sent


def prepare_statements(account):
    """Runs each operation once on this connection: its first call prepares
    the statement (one more round trip, once per connection)."""
    hold = services.authorize(account=account, amount=1, key="warm-1", reference="warm")
    services.capture(hold=hold, key="warm-capture")
    hold = services.authorize(account=account, amount=1, key="warm-2", reference="warm")
    services.capture(hold=hold)
    hold = services.authorize(account=account, amount=1, key="warm-3", reference="warm")
    services.release(hold=hold, reason="warm")
    hold = services.authorize(account=account, amount=1, key="warm-4", reference="warm")
    services.capture(hold=hold, amount=1)  # an amount (int8) where the others send NULL


@pytest.mark.django_db(transaction=True)
def test_authorize_capture_release_are_one_statement_each_in_autocommit(funded):
    assert fast_path.enabled()
    assert not connection.in_atomic_block  # autocommit: no BEGIN, no COMMIT round trips
    prepare_statements(funded)
    hold, sql = round_trips(
        lambda: services.authorize(account=funded, amount=3, key="h1", reference="p1")
    )
    assert len(sql) == 1, sql
    assert (hold.state, hold.amount, hold.account_id) == (Hold.State.PENDING, 3, funded.pk)
    captured, sql = round_trips(lambda: services.capture(hold=hold, amount=2))
    assert len(sql) == 1, sql
    assert (captured.state, captured.captured_amount) == (Hold.State.CAPTURED, 2)

    other = services.authorize(account=funded, amount=1, key="h2", reference="p2")
    released, sql = round_trips(lambda: services.release(hold=other, reason="cancel"))
    assert len(sql) == 1, sql
    assert released.state == Hold.State.RELEASED
    assert services.system_account(SystemAccount.REVENUE).available == 2 + 3  # with the warm-up
    assert_ledger_invariants()


@pytest.mark.django_db(transaction=True)
def test_a_retry_is_one_statement_and_reads_no_journal_first(funded):
    prepare_statements(funded)
    hold = services.authorize(account=funded, amount=3, key="h1", reference="p1")
    services.capture(hold=hold, key="c1")
    again, sql = round_trips(
        lambda: services.authorize(account=funded, amount=3, key="h1", reference="p1")
    )
    assert again.pk == hold.pk and len(sql) == 1
    again, sql = round_trips(lambda: services.capture(hold=hold, key="c1"))
    assert again.state == Hold.State.CAPTURED and len(sql) == 1


@pytest.mark.django_db(transaction=True)
def test_a_refused_authorize_leaves_nothing_behind(funded):
    with pytest.raises(errors.InsufficientCredits) as exc:
        services.authorize(account=funded, amount=11, key="big", reference="x")
    assert (exc.value.available, exc.value.requested) == (10, 11)
    assert not Transfer.objects.filter(key="big").exists()
    services.flag_account(account=funded, reason="dispute")
    with pytest.raises(errors.AccountFlagged, match="dispute"):
        services.authorize(account=funded, amount=1, key="f", reference="x")
    assert not Transfer.objects.filter(key="f").exists()
    assert_ledger_invariants()


@pytest.mark.django_db
def test_a_refusal_inside_the_callers_transaction_leaves_it_usable(funded):
    with transaction.atomic():
        with pytest.raises(errors.InsufficientCredits):
            services.authorize(account=funded, amount=11, key="big", reference="x")
        hold = services.authorize(account=funded, amount=2, key="ok", reference="x")
        services.capture(hold=hold)
    funded.refresh_from_db()
    assert (funded.available, funded.held) == (8, 0)
    assert_ledger_invariants()


@pytest.mark.django_db
def test_the_plain_path_is_still_there(funded, settings):
    settings.LEDGER_FAST_PATH = False
    assert not fast_path.enabled()
    hold, sql = round_trips(
        lambda: services.authorize(account=funded, amount=3, key="h1", reference="p1")
    )
    assert len(sql) >= 6, sql  # savepoint, key look-up, flag, insert, update, hold, release
    services.capture(hold=hold)
    assert_ledger_invariants()
