-- Accounts are permanent: DELETE is refused.
CREATE OR REPLACE FUNCTION ledger_account_permanent() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'ledger_account rows are permanent: DELETE refused'
        USING ERRCODE = 'restrict_violation';
END;
$$ LANGUAGE plpgsql;
