"""A terminal a person can read: `make run`'s text log, on the real stack (daphne, both
Celery workers, beat). Housekeeping — the periodic tasks, the lost-render sweep every
second — says nothing when it found nothing; requests' renders and holds still show.
(JSON logs keep every line: tests/stack/test_operations.py.)
"""

from __future__ import annotations

import re

import pytest
import requests
from django.conf import settings

from tests.support.people import Visitor
from tests.support.stack import ROOT, Stack, stack
from tests.support.waiting import wait_for

TOKEN = "quiet-terminal-metrics-token"
PANELS = [{"description": "Aiko runs.", "shot": "wide"}, {"description": "Aiko waits."}]
HOUSEKEEPING = sorted({entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()})


@pytest.fixture(scope="module", name="stack")
def quiet_stack(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("quiet")
    env = {
        "METRICS_TOKEN": TOKEN,
        "HOLD_SWEEP_SECONDS": "1",  # every sweep every second, as the lost-render one
        "RENDER_COLD_START_SECONDS": "1",
        "RENDER_SECONDS": "0.2",
        "SPECULATION_LOOKAHEAD": "0",
        "MEDIA_ROOT": str(tmp / "media"),
        "BEAT_SCHEDULE_FILE": str(tmp / "beat-schedule"),
    }
    with stack("quiet", log=ROOT / "artifacts" / "quiet-terminal-stack.log", **env) as running:
        yield running


def succeeded(stack: Stack, task: str) -> float:
    text = requests.get(
        f"{stack.base_url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10
    ).text
    for line in text.splitlines():
        name, _, rest = line.partition("{")
        labels, _, count = rest.rpartition("} ")
        if name == "mangagen_celery_tasks_total" and sorted(labels.split(",")) == sorted(
            [f'task="{task}"', 'outcome="succeeded"']
        ):
            return float(count)
    return 0.0


def test_sweeps_that_found_nothing_say_nothing_and_a_render_and_its_holds_still_show(stack):
    person = Visitor(stack.base_url)
    assert person.post("/credits/demo/", allow_redirects=False).status_code == 302
    board = person.post("/api/storyboards/", {"title": "Quiet", "story": "Aiko runs."}).json()
    person.request("PATCH", f"/api/storyboards/{board['id']}/", json={"panels": PANELS})
    job = person.post(f"/api/storyboards/{board['id']}/generate/").json()["job"]

    def said(text: str):
        return lambda: text in stack.log.read_text()

    wait_for(said(f"job {job} panel 1 attempt 1: delivered"), what="the render's line")
    wait_for(said("ledger authorize: hold #"), what="the hold's line")
    wait_for(said("ledger capture: hold #"), what="the capture's line")
    # Every housekeeping task ran, some of them many times, and found nothing to do.
    for task in (
        "mangagen.jobs.tasks.requeue_lost_renders",
        "mangagen.jobs.tasks.sweep_jobs",
        "ledger.tasks.expire_stale_holds",
    ):
        wait_for(
            lambda task=task: succeeded(stack, task) >= 3, every=0.5, what=f"{task} to run 3 times"
        )
    # The log's lines (a worker's start-up banner lists every task it knows: not a line).
    log = "\n".join(
        line
        for line in stack.log.read_text().splitlines()
        if re.search(r" (DEBUG|INFO|WARNING|ERROR|CRITICAL) ", line)
    )
    assert "render@" in log and f"job {job} panel 1" in log
    for task in HOUSEKEEPING:
        assert task not in log, [line for line in log.splitlines() if task in line][:3]
    assert "Sending due task" not in log
    assert re.search(r"Task mangagen\.jobs\.tasks\.render_panel\[\S+\] succeeded", log)
