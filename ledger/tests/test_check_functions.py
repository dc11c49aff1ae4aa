"""On PostgreSQL the ledger's multi-column CHECKs call compiled functions
(migration 0011): the same constraints, by name and by meaning."""

import itertools
from datetime import UTC, datetime
from importlib import import_module

import pytest
from django.apps import apps
from django.db import IntegrityError, connection, transaction

from ledger import services
from ledger.models import Account, Hold

pytestmark = pytest.mark.postgres

_migration = import_module("ledger.migrations.0011_check_constraints_as_functions")

# Values each column type takes in the grid, NULL included (a CHECK passes on NULL).
_SAMPLES = {
    "bigint": [None, -1, 0, 1, 2, 5],
    "integer": [None, 1],
    "varchar": [None, "user", "system", "pending", "captured", "released", "post", "void", "x"],
    "timestamp with time zone": [None, datetime(2026, 1, 1, tzinfo=UTC)],
}


def _sample_type(db_type: str) -> str:
    return "varchar" if db_type.startswith("varchar") else db_type


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("model_name", "name"),
    [(model, name) for model, names in _migration.CONVERTED.items() for name in names],
)
def test_each_function_is_its_constraint_over_every_combination(model_name, name):
    model = apps.get_model("ledger", model_name)
    constraint = next(c for c in model._meta.constraints if c.name == name)
    with connection.schema_editor() as editor:
        expression = constraint._get_check_sql(model, editor)
        _, columns = _migration.as_function(model, constraint, editor)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = %s", [name]
        )
        assert cursor.fetchone()[0] == f"CHECK ({name}({', '.join(columns)}))"
        by_column = {f.column: f for f in model._meta.concrete_fields}
        types = [_sample_type(by_column[c].db_type(connection)) for c in columns]
        # The original expression, evaluated on a row of literals named like the columns.
        placeholders = ", ".join(f"%s::{t} AS {c}" for c, t in zip(columns, types, strict=True))
        compare = (
            f"SELECT ({expression}) IS NOT DISTINCT FROM {name}({', '.join(columns)})"
            f" FROM (SELECT {placeholders}) AS row"
        )
        combinations = list(itertools.product(*(_SAMPLES[t] for t in types)))
        assert len(combinations) > 10
        for values in combinations:
            cursor.execute(compare, list(values))
            assert cursor.fetchone()[0], (name, dict(zip(columns, values, strict=True)))


@pytest.mark.django_db
def test_the_database_still_refuses_a_broken_row_by_the_constraints_name(make_user):
    account = services.account_for(make_user())
    services.grant(account=account, amount=5, key="seed", reason="seed")
    hold = services.authorize(account=account, amount=2, key="h", reference="r")
    broken_rows = {
        "ledger_hold_capture_within_amount": lambda: Hold.objects.filter(pk=hold.pk).update(
            captured_amount=1
        ),
        "ledger_hold_resolution_matches_state": lambda: Hold.objects.filter(pk=hold.pk).update(
            state=Hold.State.RELEASED
        ),
        "ledger_system_account_balance_in_shards": lambda: Account.objects.filter(
            kind=Account.Kind.SYSTEM
        ).update(available=1),
        "ledger_account_owner_matches_kind": lambda: Account.objects.filter(pk=account.pk).update(
            code="revenue2"
        ),
    }
    for name, write in broken_rows.items():
        with pytest.raises(IntegrityError, match=name), transaction.atomic():
            write()
