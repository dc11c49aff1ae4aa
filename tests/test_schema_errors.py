"""The OpenAPI schema declares every error the API answers, and says what docs/api.md says.

The schema is built as `/api/schema/` serves it (drf-spectacular's generator with
`mangagen.api.schema.ErrorDeclaringSchema`); docs/api.md is read as people read it:
the Errors table (status, codes) and each endpoint's row ("409 `name_taken`").

Pure: no database, no network.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest
from drf_spectacular.generators import SchemaGenerator

from mangagen.api.schema import declared
from mangagen.characters.errors import Refused
from mangagen.kernel.errors import Code
from mangagen.kernel.quotas import Limit

API = Path(__file__).resolve().parents[1] / "docs" / "api.md"

# Answered for a request no operation describes (a method the path lacks, an Accept
# header without JSON), or only outside the API (the Stripe webhook, /metrics).
NOT_PER_OPERATION = {
    (405, Code.METHOD_NOT_ALLOWED),
    (406, Code.NOT_ACCEPTABLE),
    (401, Code.NOT_AUTHENTICATED),
    (400, "bad_signature"),
    (500, "processing_failed"),
}
# Refusals the ledger could answer but no operation expects (docs: "not expected in
# normal use"); declared nowhere, documented all the same.
UNEXPECTED = {(409, "idempotency_conflict"), (409, "hold_already_resolved"), (409, "hold_expired")}


@cache
def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def operations() -> dict[tuple[str, str], dict[int, set[str]]]:
    """(METHOD, path with its parameters blanked) → status → the `error` codes declared."""
    found: dict[tuple[str, str], dict[int, set[str]]] = {}
    for path, methods in schema()["paths"].items():
        for method, operation in methods.items():
            errors: dict[int, set[str]] = defaultdict(set)
            for status, response in operation["responses"].items():
                if int(status) >= 400:
                    body = response["content"]["application/json"]["schema"]
                    errors[int(status)] |= set(body["allOf"][1]["properties"]["error"]["enum"])
            found[(method.upper(), _shape(path))] = errors
    return found


def _shape(path: str) -> str:
    return re.sub(r"<[^>]*>|\{[^}]*\}", "<>", path.split("?")[0])


def errors_table() -> set[tuple[int, str]]:
    """Every (status, code) of docs/api.md's Errors table."""
    text = API.read_text().split("### Errors", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d{3}) \| ([^|]+) \|", text, flags=re.MULTILINE)
    return {(int(status), code) for status, codes in rows for code in re.findall(r"`(\w+)`", codes)}


def endpoint_rows() -> list[tuple[list[tuple[str, str]], str]]:
    """Each endpoint row of docs/api.md's tables: its (METHOD, path)s and its other cells."""
    rows = []
    for line in API.read_text().splitlines():
        cells = line.split(" | ")
        endpoints = re.findall(r"`([A-Z]+) (/api/[^`?]*)", cells[0])
        if line.startswith("| `") and endpoints:
            rows.append(([(m, _shape(p)) for m, p in endpoints], " | ".join(cells[1:])))
    return rows


def test_every_error_the_schema_declares_is_in_the_errors_table():
    declared_anywhere = {
        (status, code)
        for errors in operations().values()
        for status, codes in errors.items()
        for code in codes
    }
    assert sorted(declared_anywhere - errors_table()) == []


def test_every_code_of_the_errors_table_is_declared_where_it_can_be_answered():
    declared_anywhere = {
        (status, code)
        for errors in operations().values()
        for status, codes in errors.items()
        for code in codes
    }
    expected = errors_table() - {(s, str(c)) for s, c in NOT_PER_OPERATION} - UNEXPECTED
    assert sorted(expected - declared_anywhere) == []


def test_what_each_endpoint_row_says_it_answers_is_declared_for_that_operation():
    rows = endpoint_rows()
    assert len(rows) > 30, "the endpoint tables were not found"
    missing = []
    for endpoints, answer in rows:
        # "409 `name_taken`, `list_full`", "402 `insufficient_credits`", "404 `no_such_place`"
        said = [
            (int(status), code)
            for status, codes in re.findall(r"\b([45]\d\d) ((?:`\w+`(?:, )?)+)", answer)
            for code in re.findall(r"`(\w+)`", codes)
        ]
        for endpoint in endpoints:
            assert endpoint in operations(), f"{endpoint} is documented but not in the schema"
            errors = operations()[endpoint]
            missing += [(*endpoint, s, c) for s, c in said if c not in errors.get(s, set())]
    assert missing == []


def test_every_operation_declares_the_one_error_body():
    component = schema()["components"]["schemas"]["Error"]
    assert component["required"] == ["detail", "error"]
    for (method, path), errors in operations().items():
        assert errors[403] >= {Code.NOT_AUTHENTICATED}, (method, path)
        if "<>" in path:
            assert Code.NOT_FOUND in errors[404], (method, path)


@pytest.mark.parametrize(
    ("refusal", "pairs"),
    [
        (Limit.DRAFTS, [(429, "draft_quota")]),
        (Refused, [(400, "missing_image")]),
    ],
)
def test_a_refusal_declares_its_status_and_codes(refusal, pairs):
    assert set(pairs) <= set(declared(refusal))
