"""Contracts live in one place each: job event types, speculation's decline reasons."""

import ast
import pathlib

from mangagen.jobs.events import EventType
from speculation.models import DeclineReason

ROOT = pathlib.Path(__file__).resolve().parents[1]


def emitted_types() -> dict[str, str]:
    """Every literal `type=` an `emit(...)` call passes, outside tests: type → where."""
    found = {}
    for package in ("mangagen", "speculation"):
        for source in (ROOT / package).rglob("*.py"):
            if "tests" in source.parts:
                continue
            for node in ast.walk(ast.parse(source.read_text())):
                if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "emit"):
                    continue
                for keyword in node.keywords:
                    if keyword.arg == "type" and isinstance(keyword.value, ast.Constant):
                        found[keyword.value.value] = f"{source.relative_to(ROOT)}:{node.lineno}"
    return found


def test_every_emitted_event_type_is_in_the_enum():
    emitted = emitted_types()
    assert emitted, "no emit() calls found"
    unknown = {t: where for t, where in emitted.items() if t not in set(EventType)}
    assert unknown == {}


def test_the_decline_reasons_of_the_api_contract_are_in_the_enum():
    documented = {"insufficient_credits", "capacity", "incomplete", "disabled", "late", "busy"}
    assert documented | {"budget"} <= {r.value for r in DeclineReason}
