"""Contracts live in one place each: job event types, speculation's decline reasons,
Generate's outcomes, the queues."""

import ast
import pathlib

from mangagen.jobs.events import EventType
from speculation.models import DeclineReason

ROOT = pathlib.Path(__file__).resolve().parents[1]


def emitted_types() -> dict[str, str]:
    """What every `emit(...)` call outside tests passes as `type=`: source text → where."""
    found = {}
    for package in ("mangagen", "speculation"):
        for source in (ROOT / package).rglob("*.py"):
            if "tests" in source.parts:
                continue
            for node in ast.walk(ast.parse(source.read_text())):
                if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "emit"):
                    continue
                for keyword in node.keywords:
                    if keyword.arg == "type":
                        where = f"{source.relative_to(ROOT)}:{node.lineno}"
                        found[ast.unparse(keyword.value)] = where
    return found


def test_every_emit_names_a_member_of_the_enum():
    emitted = emitted_types()
    assert emitted, "no emit() calls found"
    members = {f"EventType.{name}" for name in EventType.__members__}
    unknown = {t: where for t, where in emitted.items() if t not in members}
    assert unknown == {}


def test_generate_outcomes_and_queues_are_enums():
    from mangagen.jobs.models import GenerateOutcome
    from mangagen.kernel.queues import Queue

    assert {o.value for o in GenerateOutcome} == {"created", "attached", "existing"}
    assert {q.value for q in Queue} == {"render", "speculative"}


def test_the_decline_reasons_of_the_api_contract_are_in_the_enum():
    documented = {"insufficient_credits", "capacity", "incomplete", "disabled", "late", "busy"}
    assert documented | {"budget"} <= {r.value for r in DeclineReason}
