"""Many hold operations in one statement, one commit: `ledger_batch`.

Concurrent callers of one process hand their operations to a combiner
(`ledger/batching.py`), which sends them together as arrays: the function
runs each through the very `ledger_authorize` / `ledger_resolve` the single
path calls, in the order given, and returns one row per operation with its
index. The statement is its own transaction, so the whole batch is one
round trip and one commit (one WAL fsync) instead of one each. Any error
(a refusal that had to undo its own rows, a deadlock) rolls the whole
statement back and the combiner runs each operation alone, as before.
"""

from importlib import import_module

from django.db import migrations

# The same runner as the single-operation functions' migration.
_on_postgres = import_module("ledger.migrations.0006_fast_path")._on_postgres

POSTGRES_UP = r"""
CREATE OR REPLACE FUNCTION ledger_batch(
    p_op text[], p_account bigint[], p_hold bigint[], p_amount bigint[],
    p_key varchar[], p_reference varchar[], p_now timestamptz[], p_expires_at timestamptz[],
    p_kind varchar[], p_state varchar[], p_explicit boolean[], p_reason varchar[],
    p_actor bigint[], p_sweep boolean[], p_shards integer
) RETURNS TABLE (
    o_index integer, o_status text, o_detail text, o_kind varchar, o_debit bigint,
    o_pending bigint, o_amount bigint, o_reference varchar, o_hold ledger_hold
) LANGUAGE plpgsql AS $$
DECLARE
    a record;
    r record;
BEGIN
    FOR i IN 1 .. coalesce(array_length(p_op, 1), 0) LOOP
        o_index := i;
        IF p_op[i] = 'a' THEN
            SELECT * INTO a FROM ledger_authorize(
                p_account[i], p_amount[i], p_key[i], p_reference[i], p_now[i], p_expires_at[i]);
            o_status := a.o_status; o_detail := a.o_detail; o_kind := a.o_kind;
            o_debit := a.o_debit; o_pending := NULL; o_amount := a.o_amount;
            o_reference := a.o_reference; o_hold := a.o_hold;
        ELSE
            SELECT * INTO r FROM ledger_resolve(
                p_hold[i], p_kind[i], p_state[i], p_amount[i], p_key[i], p_explicit[i],
                p_reason[i], p_actor[i], p_now[i], p_shards, p_sweep[i]);
            o_status := r.o_status; o_detail := NULL; o_kind := r.o_kind;
            o_debit := NULL; o_pending := r.o_pending; o_amount := r.o_amount;
            o_reference := NULL; o_hold := r.o_hold;
        END IF;
        RETURN NEXT;
    END LOOP;
END;
$$;
"""
POSTGRES_DOWN = """
DROP FUNCTION IF EXISTS ledger_batch(
    text[], bigint[], bigint[], bigint[], varchar[], varchar[], timestamptz[], timestamptz[],
    varchar[], varchar[], boolean[], varchar[], bigint[], boolean[], integer
);
"""


class Migration(migrations.Migration):
    dependencies = [("ledger", "0008_leaner_journal_indexes")]

    operations = [
        migrations.RunPython(_on_postgres(POSTGRES_UP), _on_postgres(POSTGRES_DOWN)),
    ]
