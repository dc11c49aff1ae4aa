"""The journal is append-only: PostgreSQL refuses UPDATE and DELETE of transfers.

(TRUNCATE, an owner-only bulk operation that test suites use to reset the
database, is left alone; row triggers do not fire on it.)
"""

from django.db import migrations

POSTGRES_UP = """
CREATE OR REPLACE FUNCTION ledger_transfer_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'ledger_transfer is append-only: % refused', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER ledger_transfer_append_only
    BEFORE UPDATE OR DELETE ON ledger_transfer
    FOR EACH ROW EXECUTE FUNCTION ledger_transfer_append_only();
"""
POSTGRES_DOWN = """
DROP TRIGGER IF EXISTS ledger_transfer_append_only ON ledger_transfer;
DROP FUNCTION IF EXISTS ledger_transfer_append_only();
"""
def _run(statements_by_vendor):
    def run(apps, schema_editor):
        statements = statements_by_vendor.get(schema_editor.connection.vendor, [])
        for statement in [statements] if isinstance(statements, str) else statements:
            schema_editor.execute(statement, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("ledger", "0001_initial")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": POSTGRES_UP}),
            _run({"postgresql": POSTGRES_DOWN}),
        ),
    ]
