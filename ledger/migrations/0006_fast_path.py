"""The ledger at scale: one-statement hold operations on PostgreSQL.

PostgreSQL gets two stored functions, `ledger_authorize` and `ledger_resolve`,
which do exactly what the plain path in `ledger/services.py` does — the same
journal rows, the same lock order (hold → idempotency key → account rows →
shard rows), every condition re-checked on the locked row — inside one
statement, so an operation costs one round trip. They return a status and
never raise for an expected refusal that wrote nothing; the one refusal that
must undo its own journal row (credits spent by a racer between the check and
the conditional UPDATE) raises SQLSTATE LF001/LF002 and the whole statement
rolls back.

Every database gets the CHECK that keeps a system account's balance in its
shards.
"""

from django.db import migrations, models

POSTGRES_UP = r"""
CREATE OR REPLACE FUNCTION ledger_authorize(
    p_account bigint, p_amount bigint, p_key varchar, p_reference varchar,
    p_now timestamptz, p_expires_at timestamptz,
    OUT o_status text, OUT o_detail text,
    OUT o_kind varchar, OUT o_debit bigint, OUT o_amount bigint, OUT o_reference varchar,
    OUT o_hold ledger_hold
) LANGUAGE plpgsql AS $$
DECLARE
    v_account record;
    v_revenue bigint;
    v_transfer bigint;
    v_original ledger_transfer;
BEGIN
    SELECT kind, available, flagged_at, flag_reason INTO v_account
      FROM ledger_account WHERE id = p_account;
    IF v_account.kind = 'user' AND v_account.flagged_at IS NOT NULL THEN
        o_status := 'flagged'; o_detail := v_account.flag_reason; RETURN;
    END IF;
    -- A refusal known before any write; a retry of a placed hold still replays.
    IF v_account.available < p_amount
       AND NOT EXISTS (SELECT 1 FROM ledger_transfer WHERE key = p_key) THEN
        o_status := 'insufficient'; o_detail := v_account.available::text; RETURN;
    END IF;
    SELECT id INTO v_revenue FROM ledger_account WHERE code = 'revenue';
    IF v_revenue IS NULL THEN
        INSERT INTO ledger_account (kind, code, available, held, created_at, flag_reason)
        VALUES ('system', 'revenue', 0, 0, p_now, '') ON CONFLICT (code) DO NOTHING;
        SELECT id INTO v_revenue FROM ledger_account WHERE code = 'revenue';
    END IF;
    -- The key: its unique index makes a concurrent twin wait here, then replay.
    INSERT INTO ledger_transfer
        (key, kind, debit_account_id, credit_account_id, amount, reason, reference, created_at)
    VALUES (p_key, 'pending', p_account, v_revenue, p_amount, '', p_reference, p_now)
    ON CONFLICT (key) DO NOTHING
    RETURNING id INTO v_transfer;
    IF v_transfer IS NULL THEN
        SELECT * INTO v_original FROM ledger_transfer WHERE key = p_key;
        SELECT * INTO o_hold FROM ledger_hold WHERE pending_transfer_id = v_original.id;
        o_status := 'replay'; o_kind := v_original.kind; o_debit := v_original.debit_account_id;
        o_amount := v_original.amount; o_reference := v_original.reference;
        RETURN;
    END IF;
    INSERT INTO ledger_hold
        (account_id, amount, state, reference, expires_at, created_at,
         pending_transfer_id, resolution_reason)
    VALUES (p_account, p_amount, 'pending', p_reference, p_expires_at, p_now, v_transfer, '')
    RETURNING * INTO o_hold;
    -- The account row last, so a busy account is locked for the least time;
    -- the decrement re-checks its condition on the locked row.
    UPDATE ledger_account SET available = available - p_amount, held = held + p_amount
     WHERE id = p_account AND available >= p_amount
       AND (kind <> 'user' OR flagged_at IS NULL);
    IF NOT FOUND THEN
        -- A racer got there first: raising undoes this statement's rows.
        SELECT available, flagged_at, flag_reason INTO v_account
          FROM ledger_account WHERE id = p_account;
        IF v_account.flagged_at IS NOT NULL THEN
            RAISE EXCEPTION 'ledger: account flagged'
                USING ERRCODE = 'LF001', DETAIL = v_account.flag_reason;
        END IF;
        RAISE EXCEPTION 'ledger: insufficient credits'
            USING ERRCODE = 'LF002', DETAIL = coalesce(v_account.available, 0)::text;
    END IF;
    o_status := 'placed';
END;
$$;

CREATE OR REPLACE FUNCTION ledger_resolve(
    p_hold bigint, p_kind varchar, p_state varchar, p_amount bigint,
    p_key varchar, p_explicit_key boolean, p_reason varchar, p_actor bigint,
    p_now timestamptz, p_shards integer, p_sweep boolean,
    OUT o_status text, OUT o_kind varchar, OUT o_pending bigint, OUT o_amount bigint,
    OUT o_hold ledger_hold
) LANGUAGE plpgsql AS $$
DECLARE
    v_taken ledger_transfer;
    v_system bigint;
    v_amount bigint;
    v_spent bigint;
    v_transfer bigint;
BEGIN
    -- 1. The hold row, locked; the sweep skips a hold someone else holds and
    --    re-checks "pending and past expiry" on the locked row.
    IF p_sweep THEN
        SELECT * INTO o_hold FROM ledger_hold
         WHERE id = p_hold AND state = 'pending' AND expires_at <= p_now
           FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN o_status := 'skipped'; RETURN; END IF;
    ELSE
        SELECT * INTO o_hold FROM ledger_hold WHERE id = p_hold FOR UPDATE;
        IF NOT FOUND THEN o_status := 'missing'; RETURN; END IF;
    END IF;
    -- 2. A caller's own key, used before: a replay or a conflict, decided by the caller.
    IF p_explicit_key THEN
        SELECT * INTO v_taken FROM ledger_transfer WHERE key = p_key;
        IF FOUND THEN
            o_status := 'key_used'; o_kind := v_taken.kind; o_pending := v_taken.pending_id;
            o_amount := v_taken.amount;
            RETURN;
        END IF;
    END IF;
    IF o_hold.state <> 'pending' THEN o_status := 'resolved'; RETURN; END IF;
    v_amount := coalesce(p_amount, o_hold.amount);
    IF p_kind = 'post' AND o_hold.expires_at <= p_now THEN o_status := 'expired'; RETURN; END IF;
    IF p_kind = 'post' AND v_amount > o_hold.amount THEN o_status := 'too_much'; RETURN; END IF;
    -- 3. The key, by inserting the resolution (the database allows one per hold).
    SELECT credit_account_id INTO v_system FROM ledger_transfer WHERE id = o_hold.pending_transfer_id;
    INSERT INTO ledger_transfer
        (key, kind, debit_account_id, credit_account_id, amount, pending_id,
         reason, reference, actor_id, created_at)
    VALUES (p_key, p_kind, o_hold.account_id, v_system, v_amount, o_hold.pending_transfer_id,
            p_reason, o_hold.reference, p_actor, p_now)
    ON CONFLICT (key) DO NOTHING
    RETURNING id INTO v_transfer;
    IF v_transfer IS NULL THEN
        SELECT * INTO v_taken FROM ledger_transfer WHERE key = p_key;
        o_status := 'key_used'; o_kind := v_taken.kind; o_pending := v_taken.pending_id;
        o_amount := v_taken.amount;
        RETURN;
    END IF;
    v_spent := CASE WHEN p_kind = 'post' THEN v_amount ELSE 0 END;
    UPDATE ledger_hold
       SET state = p_state, captured_amount = NULLIF(v_spent, 0),
           resolution_transfer_id = v_transfer, resolved_at = p_now,
           resolved_by_id = p_actor, resolution_reason = p_reason
     WHERE id = p_hold
    RETURNING * INTO o_hold;
    -- 4. The user's row, then the system account's shard (never one hot row),
    --    last, so a busy account is locked for the least time.
    UPDATE ledger_account
       SET held = held - o_hold.amount, available = available + (o_hold.amount - v_spent)
     WHERE id = o_hold.account_id;
    IF v_spent > 0 THEN
        INSERT INTO ledger_balanceshard (account_id, shard, available)
        VALUES (v_system, o_hold.account_id % p_shards, v_spent)
        ON CONFLICT (account_id, shard)
        DO UPDATE SET available = ledger_balanceshard.available + EXCLUDED.available;
    END IF;
    o_status := 'done';
END;
$$;
"""
POSTGRES_DOWN = """
DROP FUNCTION IF EXISTS ledger_authorize(bigint, bigint, varchar, varchar, timestamptz, timestamptz);
DROP FUNCTION IF EXISTS ledger_resolve(
    bigint, varchar, varchar, bigint, varchar, boolean, varchar, bigint, timestamptz, integer, boolean
);
"""
def _on_postgres(sql):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("ledger", "0005_balance_shards")]

    operations = [
        migrations.AddConstraint(
            model_name="account",
            constraint=models.CheckConstraint(
                condition=models.Q(("kind", "user"), models.Q(("available", 0), ("held", 0)), _connector="OR"),
                name="ledger_system_account_balance_in_shards",
            ),
        ),
        migrations.RunPython(_on_postgres(POSTGRES_UP), _on_postgres(POSTGRES_DOWN)),
    ]
