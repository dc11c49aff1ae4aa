"""PostgreSQL's fast path: each hold operation is one statement, one round trip.

The stored functions `ledger_authorize` and `ledger_resolve` (migration 0006)
do what the plain path in `services` does in Python — the same journal rows,
the same lock order (hold → key → account rows → shard rows), every condition
re-checked on the locked row — inside one statement. In autocommit that
statement is its own transaction (no BEGIN, no COMMIT round trips). This
module only calls them and reads their answer; `services` turns an answer
into a result or a typed error, for both paths alike.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from types import SimpleNamespace

import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, transaction
from django.db.models.base import ModelState
from psycopg.types.numeric import Int8, Int8BinaryDumper

from . import batching, errors
from .models import SYSTEM_SHARDS, Hold

# The hold's columns, in the model's field order, so that a row becomes a
# Hold without asking the cursor for its description.
_HOLD_FIELDS = [f.attname for f in Hold._meta.concrete_fields]
_HOLD_COLUMNS = ", ".join(f"(r.o_hold).{name}" for name in _HOLD_FIELDS)

AUTHORIZE_SQL = (
    "SELECT r.o_status, r.o_detail, r.o_kind, r.o_debit, r.o_amount, r.o_reference,"
    f" {_HOLD_COLUMNS} FROM ledger_authorize(%s, %s, %s, %s, %s, %s) r"
)
RESOLVE_SQL = (
    f"SELECT r.o_status, r.o_kind, r.o_pending, r.o_amount, {_HOLD_COLUMNS}"
    " FROM ledger_resolve(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s::integer, %s) r"
)


def database():
    """The connection to take the fast path on, or None: PostgreSQL, unless
    settings.LEDGER_FAST_PATH is False."""
    db = connections[DEFAULT_DB_ALIAS]
    if db.vendor == "postgresql" and settings.LEDGER_FAST_PATH:
        return db
    return None


def enabled() -> bool:
    return database() is not None


@dataclass(slots=True)
class Answer:
    """What a stored function said: a status, the hold row, and for a key used
    before, the fields of the transfer that used it (for `_require_same`)."""

    status: str
    hold: Hold | None
    original: SimpleNamespace
    detail: str | None = None


def authorize(
    db,
    *,
    account_id: int,
    amount: int,
    key: str,
    reference: str,
    now: datetime,
    expires_at: datetime,
) -> Answer:
    """Calls ledger_authorize: 'placed', 'replay', 'flagged' or 'insufficient'."""
    params = [account_id, amount, key, reference, now, expires_at]
    try:
        # Inside a caller's transaction, a raised refusal must undo only this
        # operation: a savepoint. In autocommit the statement is its own, and
        # concurrent ones share a commit (batching).
        if db.in_atomic_block:
            with transaction.atomic(using=db.alias):
                row = _fetch(db, AUTHORIZE_SQL, params)
        else:
            row = _combined(
                db,
                batching.Operation(
                    op="a",
                    account_id=account_id,
                    run_alone=lambda conn: _fetch(conn, AUTHORIZE_SQL, params),
                    amount=amount,
                    key=key,
                    reference=reference,
                    now=now,
                    expires_at=expires_at,
                ),
            )
    except DatabaseError as exc:
        state = getattr(exc.__cause__, "sqlstate", None)
        detail = getattr(getattr(exc.__cause__, "diag", None), "message_detail", None)
        if state == errors.SQLSTATE_FLAGGED:
            raise errors.AccountFlagged(reason=detail or "") from None
        if state == errors.SQLSTATE_INSUFFICIENT:
            raise errors.InsufficientCredits(available=int(detail or 0), requested=amount) from None
        raise
    status, detail, kind, debit, original_amount, original_reference = row[:6]
    original = SimpleNamespace(
        kind=kind, debit_account_id=debit, amount=original_amount, reference=original_reference
    )
    return Answer(status, _hold(db, row[6:]), original, detail)


def resolve(
    db,
    *,
    hold_id: int,
    account_id: int,
    kind: str,
    state: str,
    amount: int | None,
    key: str,
    explicit_key: bool,
    reason: str,
    actor_id: int | None,
    now: datetime,
    sweep: bool = False,
) -> Answer:
    """Calls ledger_resolve: 'done', 'key_used', 'resolved', 'expired', 'too_much',
    'missing', or for the sweep 'skipped' (locked elsewhere, or no longer stale).

    It never raises for a refusal (nothing is written before one), so it needs
    no savepoint inside a caller's transaction.
    """
    params = [
        hold_id,
        kind,
        state,
        amount,
        key,
        explicit_key,
        reason,
        actor_id,
        now,
        SYSTEM_SHARDS,
        sweep,
    ]
    if db.in_atomic_block:
        row = _fetch(db, RESOLVE_SQL, params)
    else:
        row = _combined(
            db,
            batching.Operation(
                op="r",
                account_id=account_id,
                run_alone=lambda conn: _fetch(conn, RESOLVE_SQL, params),
                hold_id=hold_id,
                amount=amount,
                key=key,
                now=now,
                kind=kind,
                state=state,
                explicit_key=explicit_key,
                reason=reason,
                actor_id=actor_id,
                sweep=sweep,
            ),
        )
    status, original_kind, pending, original_amount = row[:4]
    original = SimpleNamespace(kind=original_kind, pending_id=pending, amount=original_amount)
    return Answer(status, _hold(db, row[4:]), original)


def _combined(db, operation: batching.Operation) -> tuple:
    """The operation's row, through the process's combiner when batching is on
    (settings.LEDGER_BATCHING, default True), else alone."""
    if not settings.LEDGER_BATCHING:
        return operation.run_alone(db)
    return batching.combiner(db.alias, operation.account_id, run_batch).run(operation)


_BATCH_SQL = (
    "SELECT r.o_index, r.o_status, r.o_detail, r.o_kind, r.o_debit, r.o_pending, r.o_amount,"
    f" r.o_reference, {_HOLD_COLUMNS} FROM ledger_batch("
    "%s::text[], %s::bigint[], %s::bigint[], %s::bigint[], %s::varchar[], %s::varchar[],"
    " %s::timestamptz[], %s::timestamptz[], %s::varchar[], %s::varchar[], %s::boolean[],"
    " %s::varchar[], %s::bigint[], %s::boolean[], %s::integer) r"
)


def run_batch(db, operations: Sequence[batching.Operation]) -> list[tuple]:
    """Runs `operations` (one account's, in the order they came) as one
    `ledger_batch` statement, one transaction, and returns for each the row its
    single statement would have returned."""
    params = [
        [o.op for o in operations],
        _int8s(o.account_id for o in operations),
        _int8s(o.hold_id for o in operations),
        _int8s(o.amount for o in operations),
        [o.key for o in operations],
        [o.reference for o in operations],
        [o.now for o in operations],
        [o.expires_at for o in operations],
        [o.kind for o in operations],
        [o.state for o in operations],
        [o.explicit_key for o in operations],
        [o.reason for o in operations],
        _int8s(o.actor_id for o in operations),
        [o.sweep for o in operations],
        SYSTEM_SHARDS,
    ]
    with db.wrap_database_errors:
        cursor = _cursor(db)
        cursor.execute(_BATCH_SQL, params, prepare=True, binary=True)
        rows = cursor.fetchall()
    answers: list[tuple] = []
    for operation, row in zip(operations, rows, strict=True):
        _, status, detail, kind, debit, pending, amount, reference = row[:8]
        hold = tuple(row[8:])
        if operation.op == "a":
            answers.append((status, detail, kind, debit, amount, reference, *hold))
        else:
            answers.append((status, kind, pending, amount, *hold))
    return answers


def _int8s(values) -> list[Int8 | None]:
    """An int8[] parameter, whatever its values. psycopg picks a list's element
    type once per statement by the Python type of its items, and with int
    dumped as int8 (see _cursor) it reused the first int list's choice (int2
    for small account ids) for every later one: hold ids past 32767 failed to
    bind, and every batch of captures fell back to one statement each."""
    return [None if v is None else Int8(v) for v in values]


def _fetch(db, sql: str, params: list) -> tuple:
    """One row from one statement, on Django's connection (its transaction state
    and error translation), through a server-side-binding psycopg cursor: the
    call is prepared once per connection, then only its parameters travel, and
    the row comes back in binary. (Django's own cursor binds on the client,
    which never prepares.)"""
    with db.wrap_database_errors:
        cursor = _cursor(db)
        cursor.execute(sql, params, prepare=True, binary=True)
        row = cursor.fetchone()
    assert row is not None  # each statement is a SELECT of one function call
    return row


# One cursor per connection, made on first use and kept with it: a cursor is
# only a result holder here (no server-side state), and making one per call
# cost more than the call's own parameters. A connection is used by one
# thread at a time (Django's are per thread; the pool lends each to one).
_cursors: weakref.WeakKeyDictionary[psycopg.Connection, psycopg.Cursor] = (
    weakref.WeakKeyDictionary()
)

# Django opens its connections with prepare_threshold=None, which turns
# psycopg's prepared statements off altogether, `prepare=True` included: every
# call was parsed and analysed again (12 % of the database's CPU in
# bench/ledger.py). A threshold no statement reaches makes `prepare=True`
# work while nothing else is prepared automatically (Django's own cursors
# bind on the client and never prepare anyway).
_PREPARE_ONLY_WHEN_ASKED = 2**31 - 1


def _cursor(db) -> psycopg.Cursor:
    db.ensure_connection()
    connection = db.connection
    cursor = _cursors.get(connection)
    if cursor is None or cursor.closed:
        if connection.prepare_threshold is None:
            connection.prepare_threshold = _PREPARE_ONLY_WHEN_ASKED
        cursor = _cursors[connection] = psycopg.Cursor(connection)
        # psycopg sends each int as the smallest type that holds it, and a
        # prepared statement is per parameter types: as int8 always, one
        # statement serves every account id and amount.
        cursor.adapters.register_dumper(int, Int8BinaryDumper)
    return cursor


def _hold(db, values: tuple) -> Hold | None:
    """The hold row as a model instance, made as Django unpickles one: the
    instance's __dict__ filled in, no __init__. Model.__init__ ran a field
    descriptor per column and two signals nobody listens to for a Hold, and
    was a sixth of the process's CPU per operation."""
    if values[0] is None:
        return None
    hold = Hold.__new__(Hold)
    hold.__dict__.update(zip(_HOLD_FIELDS, values, strict=True))
    hold._state = ModelState()
    hold._state.adding = False
    hold._state.db = db.alias
    return hold
