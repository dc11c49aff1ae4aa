-- Captures, releases or expires a hold (the single path's `capture` / `release` / the
-- sweep), in one statement: hold, then key, then account rows, then shard rows.
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
