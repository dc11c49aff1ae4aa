"""The embedded default (SQLite) keeps the ledger's promises too.

A committed grant survives a power cut (WAL with synchronous=FULL syncs the
log on every commit; NORMAL may lose the last commits), and the journal is
append-only there as on PostgreSQL: a trigger aborts any UPDATE or DELETE
(test_services.test_journal_is_append_only runs on both).
"""

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, connections, transaction

from ledger import services
from ledger.models import Transfer

sqlite_only = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="the embedded default's own guarantees"
)
pytestmark = [sqlite_only]


@pytest.mark.django_db
def test_sqlite_commits_are_durable(tmp_path):
    # The app's own settings, on a file (the test database lives in memory).
    on_file = type(connections[connection.alias])(
        {**connection.settings_dict, "NAME": str(tmp_path / "db.sqlite3")}, alias=connection.alias
    )
    try:
        with on_file.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode")
            assert cursor.fetchone()[0] == "wal"
            cursor.execute("PRAGMA synchronous")
            assert cursor.fetchone()[0] == 2  # FULL: the WAL is synced at every commit
    finally:
        on_file.close()


@pytest.mark.django_db(transaction=True)
def test_flush_still_empties_the_database_and_keeps_the_guard(user):
    """`flush` is SQLite's TRUNCATE: it empties the journal with every account,
    and the append-only triggers are back when it is done."""
    account = services.account_for(user)
    services.grant(account=account, amount=10, key="seed", reason="seed")
    call_command("flush", interactive=False, verbosity=0)
    assert not Transfer.objects.exists()

    account = services.account_for(type(user).objects.create(username="again"))
    transfer = services.grant(account=account, amount=1, key="seed", reason="seed")
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        Transfer.objects.filter(pk=transfer.pk).delete()
