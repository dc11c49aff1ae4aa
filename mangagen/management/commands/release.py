"""`manage.py release` (what `bin/release` runs): the step every deploy takes before the
processes start (docs/deploy.md).

1. The deploy checks (`check --deploy`; with DEBUG on, the plain checks): an error stops
   the release before anything changes; warnings are printed.
2. Migrations (`migrate`).
3. Static files (`collectstatic`): without DEBUG, into STATIC_ROOT under hashed names,
   compressed (mangagen/kernel/static_storage.py). With DEBUG they are served from
   static/ as they are, and nothing is collected.

Safe to run again (each step does only what is left to do), and safe when several
machines run it at once: the steps run under one lock, a PostgreSQL advisory lock
held on a connection of its own (or, on SQLite, a file lock beside the database), so
a second release waits for the first and then finds nothing left to do.
"""

from __future__ import annotations

import fcntl
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import DEFAULT_DB_ALIAS, connections

# One lock for every release of this database, whatever machine runs it.
LOCK_KEY = int.from_bytes(hashlib.sha256(b"mangagen release").digest()[:8], "big", signed=True)


class Command(BaseCommand):
    help = "The release step: deploy checks, migrations, static files; under one lock."

    def handle(self, *args, **options):
        verbosity = options["verbosity"]
        with self._lock():
            if settings.DEBUG:
                call_command("check", verbosity=verbosity)
            else:
                call_command("check", deploy=True, verbosity=verbosity)
            call_command("migrate", interactive=False, verbosity=verbosity)
            if settings.DEBUG:
                self.stdout.write("DEBUG is on: static files are served from static/ as they are.")
            else:
                call_command("collectstatic", interactive=False, verbosity=verbosity)
        self.stdout.write(self.style.SUCCESS("Released: start (or restart) the processes now."))

    @contextmanager
    def _lock(self) -> Iterator[None]:
        connection = connections[DEFAULT_DB_ALIAS]
        if connection.vendor == "postgresql":
            with self._advisory_lock(connection):
                yield
        else:
            with self._file_lock(connection.settings_dict["NAME"]):
                yield

    @contextmanager
    def _advisory_lock(self, connection) -> Iterator[None]:
        """A session-level advisory lock on a connection opened for it alone (never one of
        the pool's, which migrate may hand back and another may take, lock and all)."""
        import psycopg

        params = connection.get_connection_params()
        params.pop("cursor_factory", None)
        with psycopg.connect(**params, autocommit=True) as own:
            (got,) = own.execute("SELECT pg_try_advisory_lock(%s)", [LOCK_KEY]).fetchone()
            if not got:
                self.stdout.write("Another release is running; waiting for it to finish.")
                own.execute("SELECT pg_advisory_lock(%s)", [LOCK_KEY])
            try:
                yield
            finally:
                own.execute("SELECT pg_advisory_unlock(%s)", [LOCK_KEY])

    @contextmanager
    def _file_lock(self, name: str | Path) -> Iterator[None]:
        """An exclusive lock on a file beside the SQLite database (none for one in memory:
        nothing else can reach it)."""
        if str(name) == ":memory:" or str(name).startswith("file:"):
            yield
            return
        path = Path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.with_name(path.name + ".release-lock"), "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self.stdout.write("Another release is running; waiting for it to finish.")
                fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
