"""Checked before shown on the whole stack (daphne, both Celery workers, beat:
tests/support/stack.py) with JUDGE=openai pointed at the chat stand-in over HTTP
(tests/support/providers/openai_compatible.py). A judge that scores the first render
0.2 and the second 0.9: panel one is drawn twice, shown once with `check.score` 0.9
and `redraws` 1, and costs one credit; the judge got the render and Aiko's sheet as
pictures with the description. With the judge down, the next panel is delivered with
`check: null`."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from tests.support.factories import png
from tests.support.providers.openai_compatible import ChatStandIn
from tests.support.stack import counted, stack
from tests.support.visits import Person, setup_people
from tests.support.waiting import wait_for

SHEET = png((256, 256), (200, 20, 20))


@pytest.fixture(scope="module")
def chat():
    with ChatStandIn() as standin:
        yield standin


@pytest.fixture(scope="module", name="stack")
def judged_stack(chat):
    env = {
        **chat.environment(),
        "JUDGE_MIN_SCORE": "0.6",
        "JUDGE_MAX_REDRAWS": "1",
        "JUDGE_TIMEOUT_SECONDS": "10",
        "SPECULATION_MIN_CHANCE": "0",
        "SPECULATION_LOOKAHEAD": "0",
        "METRICS_TOKEN": "judge-stack-metrics",
    }
    with stack("judge-stack", **env) as running:
        running.shell("from mangagen.renderers.gpu_pool import GpuPool; GpuPool().reset()")
        yield running


def job_of(person: Person, job: int) -> dict:
    answer = person.http.get(f"{person.stack.base_url}/api/jobs/{job}/")
    answer.raise_for_status()
    return answer.json()


def delivered(person: Person, job: int, index: int) -> dict | None:
    panel = job_of(person, job)["panels"][index - 1]
    return panel if panel["state"] == "delivered" else None


def colour_of(picture: bytes) -> tuple[int, ...]:
    with Image.open(io.BytesIO(picture)) as image:
        return image.convert("RGB").getpixel((image.width // 2, image.height // 2))


def test_a_drifted_render_is_redrawn_shown_checked_and_charged_once(stack, chat):
    [(username, board, session)] = setup_people(stack, 1, "judged")
    person = Person(stack, username, board, session)
    person.with_a_sheet(SHEET)
    assert person.credits() == (50, 0)

    chat.scores = [0.2, 0.9]
    generated = person.post(f"/api/storyboards/{board}/generate/")
    assert generated.status_code == 201, generated.text
    job = generated.json()["job"]
    panel = wait_for(
        lambda: delivered(person, job, 1), timeout=90, every=0.3, what="panel one delivered"
    )
    assert panel["check"]["score"] == 0.9 and panel["check"]["redraws"] == 1
    assert panel["check"]["reason"] == "scored 0.9" and panel["check"]["low"] is False
    assert person.credits() == (49, 0)  # drawn twice, charged once
    assert len(chat.made) == 2
    for made in chat.made:  # the render, then Aiko's sheet, with the description
        assert len(made["images"]) == 2
        assert colour_of(made["images"][1]) == colour_of(SHEET)
        assert "Aiko runs through the station." in " ".join(made["texts"])
    wait_for(
        lambda: counted(stack, "mangagen_judge_total", verdict="redrawn") == 1,
        every=0.5,
        what="the redraw in /metrics",
    )
    assert counted(stack, "mangagen_judge_redraws_total") == 1

    # The judge goes down: panel two is delivered all the same, unchecked.
    chat.fail_next(503, {"error": {"message": "overloaded"}}, path="/v1/chat/completions", times=5)
    approved = person.post(f"/api/jobs/{job}/panels/1/approve/")
    assert approved.status_code == 200, approved.text
    panel = wait_for(
        lambda: delivered(person, job, 2), timeout=90, every=0.3, what="panel two delivered"
    )
    assert panel["check"] is None
    assert person.credits() == (48, 0)
    wait_for(
        lambda: counted(stack, "mangagen_judge_total", verdict="unchecked") == 1,
        every=0.5,
        what="the unchecked render in /metrics",
    )
