"""The ledger's SQL on PostgreSQL: its stored functions, one file each in ledger/sql/.

The files are the source of truth for what the database runs: migrations
install them (`installer`), and ledger/tests/test_stored_functions.py checks on
PostgreSQL that every installed function is exactly what its file says. To
change one, edit its file and add a migration that runs
`installer({"<name>": "<the file's new sha256>"})`: an existing database gets
the change only through a new migration, so the tests fail while the newest
migration installing a function names another version of its file than the
file is now (`digest`). (The rules themselves are written twice on purpose:
here, one statement a call, and in ledger/services.py for every other
database; the stateful test runs both against the same invariants.)
"""

from __future__ import annotations

from collections.abc import Callable
from hashlib import sha256
from pathlib import Path

SQL_DIR = Path(__file__).with_name("sql")

# Every function the ledger installs, in the order they may be installed (a function
# that calls another comes after it).
FUNCTIONS = (
    "ledger_transfer_append_only",
    "ledger_account_permanent",
    "ledger_authorize",
    "ledger_resolve",
    "ledger_batch",
)


def source(name: str) -> str:
    """The `CREATE OR REPLACE FUNCTION` statement of `name`, as its file has it."""
    if name not in FUNCTIONS:
        raise ValueError(f"No ledger function {name!r} (one of {', '.join(FUNCTIONS)}).")
    return (SQL_DIR / f"{name}.sql").read_text()


def digest(name: str) -> str:
    """The sha256 of the function's file as it is now."""
    return sha256(source(name).encode()).hexdigest()


def installer(versions: dict[str, str]) -> Callable:
    """A RunPython step that (re)creates the functions named in `versions` (name → the
    sha256 of the file this migration was written for) from their files on
    PostgreSQL, and does nothing on other databases. `installs` keeps `versions`
    for the tests."""

    def install(apps, schema_editor) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        for name in FUNCTIONS:  # in dependency order
            if name in versions:
                schema_editor.execute(source(name), params=None)

    install.installs = dict(versions)  # type: ignore[attr-defined]
    return install
