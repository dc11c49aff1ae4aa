"""`flush`, which on SQLite lifts the journal's append-only triggers for its own transaction.

PostgreSQL's flush is a TRUNCATE, which row triggers do not see, so emptying
the whole database is the one deletion its journal allows. SQLite's flush is a
DELETE per table, which the journal's triggers refuse; this lets flush do on
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
                " WHERE type = 'trigger' AND tbl_name = 'ledger_transfer'"
            )
            triggers = cursor.fetchall()
            for name, _ in triggers:
                cursor.execute(f'DROP TRIGGER "{name}"')
            super().handle(**options)
            for _, sql in triggers:
                cursor.execute(sql)
        return None
