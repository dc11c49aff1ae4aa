"""A batch locks every hold it resolves first, in id order, as a single call does.

A single `ledger_resolve` locks its hold before any account row, and every
other locker of holds (the sweep, a job releasing its holds) does the same:
hold, then account. `ledger_batch` ran its operations one after another in
one transaction, so after its first it held an account row while it locked
the next operation's hold: a sweep that had just taken that hold (with SKIP
LOCKED) and then waited for the account closed a cycle, and PostgreSQL broke
it by failing one of the two after a second (found in review, reproduced with
a sweep against a batch of two captures). Now the batch locks the holds of
all its resolutions before anything else, in id order (the sweep's with SKIP
LOCKED, re-checked as before by `ledger_resolve`), so it too takes holds
before accounts.

An authorize inside a batch still inserts its idempotency key after the
batch's earlier operations locked the account; only the same key sent twice
at once from two processes can meet it there, and the loser's deadlock
error is retried with the same key like any interrupted call.
"""

from importlib import import_module

from django.db import migrations

_on_postgres = import_module("ledger.migrations.0006_fast_path")._on_postgres
_previous = import_module("ledger.migrations.0009_batched_operations")

LOOP = "    FOR i IN 1 .. coalesce(array_length(p_op, 1), 0) LOOP\n"
HOLDS_FIRST = """    -- The holds of every resolution, before any account row, in id order.
    PERFORM 1 FROM ledger_hold
     WHERE id = ANY (SELECT p_hold[i] FROM generate_subscripts(p_op, 1) AS i
                      WHERE p_op[i] = 'r' AND NOT p_sweep[i])
     ORDER BY id FOR UPDATE;
    PERFORM 1 FROM ledger_hold
     WHERE id = ANY (SELECT p_hold[i] FROM generate_subscripts(p_op, 1) AS i
                      WHERE p_op[i] = 'r' AND p_sweep[i])
     ORDER BY id FOR UPDATE SKIP LOCKED;
"""
assert _previous.POSTGRES_UP.count(LOOP) == 1
POSTGRES_UP = _previous.POSTGRES_UP.replace(LOOP, HOLDS_FIRST + LOOP)


class Migration(migrations.Migration):
    dependencies = [("ledger", "0011_check_constraints_as_functions")]

    operations = [
        migrations.RunPython(_on_postgres(POSTGRES_UP), _on_postgres(_previous.POSTGRES_UP)),
    ]
