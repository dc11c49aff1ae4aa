"""What PostgreSQL runs is what ledger/sql/*.sql says (the files are the source of truth)."""

import pytest
from django.db import connection

from ledger.stored_functions import FUNCTIONS, source


def definition(cursor, qualified_name: str) -> str:
    cursor.execute("SELECT pg_get_functiondef(%s::regproc)", [qualified_name])
    return cursor.fetchone()[0]


@pytest.mark.postgres
@pytest.mark.django_db
@pytest.mark.parametrize("name", FUNCTIONS)
def test_the_installed_function_is_its_file(name):
    """Each file is created again in a scratch schema and PostgreSQL's own rendering of
    both (arguments, result, body) compared: any drift, either way, fails."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE SCHEMA ledger_sql_check")
        cursor.execute("SET LOCAL search_path TO ledger_sql_check, public")
        cursor.execute(source(name))
        from_file = definition(cursor, f"ledger_sql_check.{name}")
        installed = definition(cursor, f"public.{name}")
    assert from_file.replace("ledger_sql_check.", "public.", 1) == installed


def test_the_newest_migration_installing_each_function_names_its_file_as_it_is():
    """A file edited without a migration that installs it again would reach fresh
    databases (whose migrations read the files) and never existing ones."""
    from django.db.migrations.loader import MigrationLoader
    from django.db.migrations.operations import RunPython

    from ledger.stored_functions import digest

    loader = MigrationLoader(None, ignore_no_migrations=True)
    newest: dict[str, str] = {}
    for key in loader.graph.forwards_plan(("ledger", loader.graph.leaf_nodes("ledger")[0][1])):
        for operation in loader.graph.nodes[key].operations:
            if isinstance(operation, RunPython):
                newest.update(getattr(operation.code, "installs", {}))
    assert sorted(newest) == sorted(FUNCTIONS)
    stale = {name: sha for name, sha in newest.items() if sha != digest(name)}
    assert stale == {}, "edited without a migration that installs the new version"


def test_every_sql_file_is_a_known_function():
    from ledger.stored_functions import SQL_DIR

    assert sorted(p.stem for p in SQL_DIR.glob("*.sql")) == sorted(FUNCTIONS)
    for name in FUNCTIONS:
        assert f"CREATE OR REPLACE FUNCTION {name}(" in source(name)
