"""Fewer index entries per journal row: half the WAL each operation writes.

Every operation writes two journal rows and a hold row; each index on them
is a WAL record to fsync at commit, and commit fsyncs are what concurrent
operations wait on (pg_stat_activity: WALWrite/WALSync). Dropped: the
single-column foreign-key indexes that the (account, kind) indexes already
serve, the `pending` index that the resolves-once unique index now serves
(same rows, by the CHECK that only resolutions have a `pending`), the
LIKE-pattern copy of the key index that no query uses, and entries for
NULL actors, operators and closed holds. No constraint changes meaning.
"""

from importlib import import_module

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# Rebuilding a table on SQLite (as AlterField does) drops its triggers.
_append_only = import_module("ledger.migrations.0007_sqlite_append_only_journal")


def restore_append_only_on_sqlite(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for statement in _append_only.SQLITE_UP:
            create = statement.replace("CREATE TRIGGER", "CREATE TRIGGER IF NOT EXISTS", 1)
            schema_editor.execute(create, params=None)


def drop_key_pattern_index(apps, schema_editor):
    # Django adds a varchar_pattern_ops copy of every unique CharField's index
    # on PostgreSQL, for LIKE 'prefix%'. Nothing searches keys by prefix.
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'ledger_transfer'"
            " AND indexdef LIKE '%%varchar_pattern_ops%%'"
        )
        for (name,) in cursor.fetchall():
            schema_editor.execute(f'DROP INDEX IF EXISTS "{name}"', params=None)


def create_key_pattern_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            'CREATE INDEX IF NOT EXISTS "ledger_transfer_key_451b4b01_like"'
            ' ON "ledger_transfer" ("key" varchar_pattern_ops)',
            params=None,
        )


class Migration(migrations.Migration):

    dependencies = [
        ('ledger', '0007_sqlite_append_only_journal'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(drop_key_pattern_index, create_key_pattern_index),
        migrations.RemoveConstraint(
            model_name='transfer',
            name='ledger_transfer_resolves_once',
        ),
        migrations.RemoveIndex(
            model_name='hold',
            name='ledger_hold_state_b6870c_idx',
        ),
        migrations.AlterField(
            model_name='hold',
            name='resolved_by',
            field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AlterField(
            model_name='transfer',
            name='actor',
            field=models.ForeignKey(blank=True, db_index=False, help_text='The operator who did this by hand, if anyone.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AlterField(
            model_name='transfer',
            name='credit_account',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='credits', to='ledger.account'),
        ),
        migrations.AlterField(
            model_name='transfer',
            name='debit_account',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='debits', to='ledger.account'),
        ),
        migrations.AlterField(
            model_name='transfer',
            name='pending',
            field=models.ForeignKey(blank=True, db_index=False, help_text='For a capture or release: the pending transfer it resolves.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='resolutions', to='ledger.transfer'),
        ),
        migrations.AddIndex(
            model_name='hold',
            index=models.Index(condition=models.Q(('state', 'pending')), fields=['expires_at'], name='ledger_hold_open_by_expiry'),
        ),
        migrations.AddIndex(
            model_name='hold',
            index=models.Index(condition=models.Q(('resolved_by__isnull', False)), fields=['resolved_by'], name='ledger_hold_resolved_by'),
        ),
        migrations.AddIndex(
            model_name='transfer',
            index=models.Index(condition=models.Q(('actor__isnull', False)), fields=['actor'], name='ledger_transfer_actor'),
        ),
        migrations.AddConstraint(
            model_name='transfer',
            constraint=models.UniqueConstraint(condition=models.Q(('pending__isnull', False)), fields=('pending',), name='ledger_transfer_resolves_once'),
        ),
        migrations.RunPython(restore_append_only_on_sqlite, migrations.RunPython.noop),
    ]
