"""The journal is append-only on SQLite too: triggers abort UPDATE and DELETE.

What 0002 did for PostgreSQL. (`manage.py flush`, SQLite's TRUNCATE, lifts
them for its own transaction: see ledger/management/commands/flush.py.)
"""

from django.db import migrations

SQLITE_UP = [
    """CREATE TRIGGER ledger_transfer_no_update BEFORE UPDATE ON ledger_transfer
    BEGIN SELECT RAISE(ABORT, 'ledger_transfer is append-only: UPDATE refused'); END""",
    """CREATE TRIGGER ledger_transfer_no_delete BEFORE DELETE ON ledger_transfer
    BEGIN SELECT RAISE(ABORT, 'ledger_transfer is append-only: DELETE refused'); END""",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS ledger_transfer_no_update",
    "DROP TRIGGER IF EXISTS ledger_transfer_no_delete",
]


def _run(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "sqlite":
            for statement in statements:
                schema_editor.execute(statement, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("ledger", "0006_fast_path")]

    operations = [migrations.RunPython(_run(SQLITE_UP), _run(SQLITE_DOWN))]
