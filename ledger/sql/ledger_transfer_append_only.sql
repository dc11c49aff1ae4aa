-- The journal is append-only: UPDATE and DELETE of a transfer are refused.
CREATE OR REPLACE FUNCTION ledger_transfer_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'ledger_transfer is append-only: % refused', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$ LANGUAGE plpgsql;
