"""`flush`, which on SQLite lifts the ledger's no-edit triggers for its own transaction.

PostgreSQL's flush is a TRUNCATE, which row triggers do not see, so emptying
the whole database is the one deletion its journal allows. SQLite's flush is a
DELETE per table, which the journal's and the accounts' triggers refuse; this lets flush do on
SQLite what it does on PostgreSQL, and puts the triggers back in the same
transaction. (Tests flush between transactional tests.)
"""

from django.core.management.commands import flush
from django.db import connections, transaction


class Command(flush.Command):
    def handle(self, **options):
        connection = connections[options["database"]]
        if connection.vendor != "sqlite":
            return super().handle(**options)
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            cursor.execute(
                "SELECT name, sql FROM sqlite_master"
                " WHERE type = 'trigger' AND tbl_name IN ('ledger_transfer', 'ledger_account')"
            )
            triggers = cursor.fetchall()
            for name, _ in triggers:
                cursor.execute(f'DROP TRIGGER "{name}"')
            super().handle(**options)
            for _, sql in triggers:
                cursor.execute(sql)
        return None
