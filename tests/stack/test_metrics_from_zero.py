"""Every labelled metric family whose label values are known is in `/metrics` from the
start, at zero: a dashboard or an alert on a series that is missing until something
happens sees nothing instead of 0 (Prometheus' guidance). On the real stack (daphne,
both Celery workers and beat, every process writing to one multiprocess folder),
scraped before anyone has done anything.
"""

from __future__ import annotations

import re

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from ledger.errors import LedgerCode
from mangagen.kernel.quotas import Limit
from mangagen.observability.metrics import (
    LEDGER_OPERATIONS,
    READING_ANSWERS,
    RenderOutcome,
    RenderPhase,
    RoughOutcome,
    SpeculationOutcome,
    TaskOutcome,
)
from speculation.models import DeclineReason
from tests.support.stack import ROOT, stack

TOKEN = "metrics-token-from-zero"
# Tasks a quiet stack never runs (beat runs the sweeps at once): their series are at 0.
NEVER_RUN = (
    "mangagen.jobs.tasks.render_panel",
    "mangagen.characters.tasks.render_sheet",
    "mangagen.roughs.tasks.draw_rough",
)


@pytest.fixture(scope="module", name="stack")
def fresh_stack(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("from-zero")
    env = {
        "METRICS_TOKEN": TOKEN,
        "MEDIA_ROOT": str(tmp / "media"),
        "BEAT_SCHEDULE_FILE": str(tmp / "beat-schedule"),
    }
    log = ROOT / "artifacts" / "metrics-from-zero-stack.log"
    with stack("from-zero", log=log, **env) as running:
        yield running


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_every_known_label_value_is_scraped_at_zero_before_anything_happens(stack):
    answer = requests.get(
        f"{stack.base_url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10
    )
    assert answer.status_code == 200
    found = samples(answer.text)

    def at_zero(name: str, **labels: str) -> bool:
        return found.get((name, frozenset(labels.items()))) == 0

    missing = [
        *(
            f"speculation declined {reason}"
            for reason in DeclineReason
            if not at_zero("mangagen_speculation_total", decision="declined", reason=reason)
        ),
        *(
            f"ledger {op} {result}"
            for op in ("grant", "revoke", "authorize", "capture", "release")
            for result in ("ok", "error", *LedgerCode)
            if not at_zero("ledger_operations_total", op=op, result=result)
        ),
        *(
            f"limit {limit}"
            for limit in Limit
            if not at_zero("mangagen_limit_refusals_total", limit=limit)
        ),
        *(
            f"render {outcome}"
            for outcome in RenderOutcome
            if not at_zero("mangagen_renders_total", outcome=outcome)
        ),
        *(
            f"phase {phase}"
            for phase in RenderPhase
            if not at_zero("mangagen_render_seconds_count", phase=phase)
        ),
        *(
            f"rough {outcome}"
            for outcome in RoughOutcome
            if not at_zero("mangagen_roughs_total", outcome=outcome)
        ),
        *(
            f"speculation ended {outcome}"
            for outcome in SpeculationOutcome
            if not at_zero("mangagen_speculation_outcomes_total", outcome=outcome)
        ),
        *(
            f"task {task} {outcome}"
            for task in NEVER_RUN
            for outcome in TaskOutcome
            if not at_zero("mangagen_celery_tasks_total", task=task, outcome=outcome)
        ),
        *(
            f"task seconds {task}"
            for task in NEVER_RUN
            if not at_zero("mangagen_celery_task_seconds_count", task=task)
        ),
        *(
            f"reading page {answer}"
            for answer in READING_ANSWERS
            if not at_zero("mangagen_reading_pages_total", answer=answer)
        ),
    ]
    assert at_zero("mangagen_speculation_total", decision="started", reason="")
    assert missing == []


def test_the_ledger_operations_started_at_zero_are_those_the_ledger_counts():
    """The studio starts `ledger_operations_total` for LEDGER_OPERATIONS: every operation
    ledger/ counts (`@counted("…")`, `op="…"`) is among them."""
    counted = set()
    for source in (ROOT / "ledger").glob("*.py"):
        text = source.read_text()
        counted |= set(re.findall(r'@counted\("(\w+)"\)', text))
        counted |= set(re.findall(r'operations\.labels\(op="(\w+)"', text))
        counted |= set(re.findall(r'_notes\.note\(\("(\w+)"', text))
    assert counted and counted == set(LEDGER_OPERATIONS)
