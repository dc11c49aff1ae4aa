-- Many hold operations in one statement and one commit: each through ledger_authorize or
-- ledger_resolve, in order, after locking every resolution's hold in id order.
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
    -- The holds of every resolution, before any account row, in id order.
    PERFORM 1 FROM ledger_hold
     WHERE id = ANY (SELECT p_hold[i] FROM generate_subscripts(p_op, 1) AS i
                      WHERE p_op[i] = 'r' AND NOT p_sweep[i])
     ORDER BY id FOR UPDATE;
    PERFORM 1 FROM ledger_hold
     WHERE id = ANY (SELECT p_hold[i] FROM generate_subscripts(p_op, 1) AS i
                      WHERE p_op[i] = 'r' AND p_sweep[i])
     ORDER BY id FOR UPDATE SKIP LOCKED;
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
