-- Places a hold (the single path's `authorize`, in one statement): the idempotency key, the
-- account's conditional decrement, the journal's pending transfer and the hold row.
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
