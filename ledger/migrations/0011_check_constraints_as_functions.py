"""PostgreSQL checks the ledger's multi-column invariants through compiled functions.

PostgreSQL re-reads every CHECK constraint of a table from its stored text
(`stringToNode`) and plans it again for each statement that writes a row:
the ledger's six multi-column checks are 1-2.5 kB of node text each, and
every authorize+capture pair writes two journal rows, a hold twice and an
account row twice, so that parsing was 13 % of the database's CPU under
`bench/ledger.py` (perf). A CHECK that calls an IMMUTABLE PL/pgSQL function
of the same columns is a few hundred bytes to parse, and the function's
expression is compiled once per connection.

Nothing changes in meaning: each function's body is the very SQL expression
Django generates for the model's constraint (read from the model state here,
not retyped), with the columns as parameters of the same names; the
constraint keeps its name; three-valued logic is the same (a NULL result
still passes, as a CHECK's does). SQLite keeps the plain constraints. A
later migration that removes or alters one of these constraints drops it by
name as usual (its function can then be dropped too).
"""

import re

from django.db import migrations

# model name -> the constraints with more than one column (the single
# comparisons, like amount > 0, are as cheap to parse as a function call).
CONVERTED = {
    "account": [
        "ledger_user_account_available_gte_0",
        "ledger_system_account_balance_in_shards",
        "ledger_account_owner_matches_kind",
    ],
    "transfer": ["ledger_transfer_pending_iff_resolution"],
    "hold": ["ledger_hold_resolution_matches_state", "ledger_hold_capture_within_amount"],
}


def _constraint(model, name):
    return next(c for c in model._meta.constraints if c.name == name)


def _signature(model, expression: str, schema_editor) -> list[tuple[str, str]]:
    """(column, type) of each of the model's columns `expression` reads, by name."""
    by_column = {f.column: f for f in model._meta.concrete_fields}
    read = sorted({c for c in re.findall(r'"(\w+)"', expression) if c in by_column})
    return [(c, by_column[c].db_type(schema_editor.connection)) for c in read]


def as_function(model, constraint, schema_editor) -> tuple[str, list[str]]:
    """(CREATE FUNCTION statement, the columns it takes) for a CheckConstraint:
    the function returns exactly the constraint's own SQL expression."""
    expression = constraint._get_check_sql(model, schema_editor)
    signature = _signature(model, expression, schema_editor)
    quote = schema_editor.quote_name
    parameters = ", ".join(f"{quote(column)} {type_}" for column, type_ in signature)
    body = f"BEGIN RETURN ({expression}); END"
    sql = (
        f"CREATE OR REPLACE FUNCTION {quote(constraint.name)}({parameters}) RETURNS boolean"
        f" LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $check$ {body} $check$"
    )
    return sql, [column for column, _ in signature]


def _converted(apps, schema_editor):
    """(model, quoted table, constraint) for each converted constraint, on PostgreSQL."""
    if schema_editor.connection.vendor != "postgresql":
        return
    for model_name, names in CONVERTED.items():
        model = apps.get_model("ledger", model_name)
        for name in names:
            yield model, schema_editor.quote_name(model._meta.db_table), _constraint(model, name)


def to_functions(apps, schema_editor):
    quote = schema_editor.quote_name
    for model, table, constraint in _converted(apps, schema_editor):
        function, columns = as_function(model, constraint, schema_editor)
        schema_editor.execute(function, params=None)
        name = quote(constraint.name)
        arguments = ", ".join(quote(c) for c in columns)
        schema_editor.execute(
            f"ALTER TABLE {table} DROP CONSTRAINT {name},"
            f" ADD CONSTRAINT {name} CHECK ({name}({arguments}))",
            params=None,
        )


def to_plain(apps, schema_editor):
    quote = schema_editor.quote_name
    for model, table, constraint in _converted(apps, schema_editor):
        name = quote(constraint.name)
        expression = constraint._get_check_sql(model, schema_editor)
        schema_editor.execute(
            f"ALTER TABLE {table} DROP CONSTRAINT {name}, ADD CONSTRAINT {name} CHECK ({expression})",
            params=None,
        )
        types = ", ".join(type_ for _, type_ in _signature(model, expression, schema_editor))
        schema_editor.execute(f"DROP FUNCTION IF EXISTS {name}({types})", params=None)


class Migration(migrations.Migration):
    dependencies = [("ledger", "0010_leaner_holds_permanent_accounts")]

    operations = [migrations.RunPython(to_functions, to_plain)]
