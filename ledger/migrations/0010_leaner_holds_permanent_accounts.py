"""Accounts are permanent; the ledger's references to its own rows drop their FKs;
holds carry fewer index entries.

A foreign key re-reads and KEY SHARE-locks the row it points at when the
transaction commits: nine checks (and nine WAL records) per hold placed and
captured, and every capture locking the one revenue account row, which is
the hot row the balance shards exist to avoid. The rows they point at cannot
disappear: transfers are append-only (0002, 0007), and now accounts refuse
DELETE too (a trigger on both databases), and each operation takes the ids it
writes from rows it has just locked or inserted. Foreign keys to users stay.

A hold's resolving update changes `state`, so it is never a HOT update: every
full index on the hold gets a second entry then. The account's index now
holds open holds only (what reconciliation and `open_holds` read), and the
resolution transfer's unique index is gone (a resolution names its pending
transfer, whose index is unique, and `ledger_transfer_resolves_once` allows
one per hold). Measured with bench/ledger.py: 8 threads over 100 accounts
went from 0.37-0.39x the raw loop to 0.44-0.47x.
"""

from importlib import import_module

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# Rebuilding a table on SQLite (as AlterField does) drops its triggers.
_append_only = import_module("ledger.migrations.0007_sqlite_append_only_journal")

POSTGRES_UP = """
CREATE OR REPLACE FUNCTION ledger_account_permanent() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'ledger_account rows are permanent: DELETE refused'
        USING ERRCODE = 'restrict_violation';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER ledger_account_permanent
    BEFORE DELETE ON ledger_account
    FOR EACH ROW EXECUTE FUNCTION ledger_account_permanent();
"""
POSTGRES_DOWN = """
DROP TRIGGER IF EXISTS ledger_account_permanent ON ledger_account;
DROP FUNCTION IF EXISTS ledger_account_permanent();
"""
SQLITE_UP = """CREATE TRIGGER ledger_account_no_delete BEFORE DELETE ON ledger_account
    BEGIN SELECT RAISE(ABORT, 'ledger_account rows are permanent: DELETE refused'); END"""
SQLITE_DOWN = "DROP TRIGGER IF EXISTS ledger_account_no_delete"


def permanent_accounts(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(POSTGRES_UP, params=None)
    elif vendor == "sqlite":
        schema_editor.execute(SQLITE_UP, params=None)
        for statement in _append_only.SQLITE_UP:
            create = statement.replace("CREATE TRIGGER", "CREATE TRIGGER IF NOT EXISTS", 1)
            schema_editor.execute(create, params=None)


def deletable_accounts(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(POSTGRES_DOWN, params=None)
    elif vendor == "sqlite":
        schema_editor.execute(SQLITE_DOWN, params=None)


class Migration(migrations.Migration):

    dependencies = [
        ('ledger', '0009_batched_operations'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name='hold',
            name='account',
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='holds', to='ledger.account'),
        ),
        migrations.AlterField(
            model_name='hold',
            name='pending_transfer',
            field=models.OneToOneField(db_constraint=False, on_delete=django.db.models.deletion.PROTECT, related_name='hold', to='ledger.transfer'),
        ),
        migrations.AlterField(
            model_name='hold',
            name='resolution_transfer',
            field=models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='ledger.transfer'),
        ),
        migrations.AlterField(
            model_name='transfer',
            name='credit_account',
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='credits', to='ledger.account'),
        ),
        migrations.AlterField(
            model_name='transfer',
            name='debit_account',
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='debits', to='ledger.account'),
        ),
        migrations.AlterField(
            model_name='transfer',
            name='pending',
            field=models.ForeignKey(blank=True, db_constraint=False, db_index=False, help_text='For a capture or release: the pending transfer it resolves.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='resolutions', to='ledger.transfer'),
        ),
        migrations.AddIndex(
            model_name='hold',
            index=models.Index(condition=models.Q(('state', 'pending')), fields=['account'], name='ledger_hold_open_by_account'),
        ),
        migrations.RunPython(permanent_accounts, deletable_accounts),
    ]
