"""The whole stack (daphne, both Celery workers, beat: tests/support/stack.py) with
RENDERER=replicate against the Replicate stand-in over HTTP, driven as the browser
drives it: Generate is delivered and charged once; a speculation whose person
leaves Review is cancelled at Replicate and costs nothing. Both are counted in
/metrics as a worker saw them (the phases of the one, the cancel of the other)."""

from __future__ import annotations

import pytest

from tests.support.providers.replicate import ReplicateStandIn
from tests.support.stack import Stack, counted, stack
from tests.support.visits import Person, setup_people
from tests.support.waiting import wait_for


@pytest.fixture(scope="module")
def replicate():
    with ReplicateStandIn(cold_boot=3.0, render=0.5, capacity=2) as standin:
        yield standin


@pytest.fixture(scope="module", name="stack")
def replicate_stack(replicate):
    env = {
        **replicate.environment(),
        "RENDER_HTTP_BACKOFF_SECONDS": "0.2",
        "SPECULATION_MIN_CHANCE": "0",
        "SPECULATION_LOOKAHEAD": "0",
        "METRICS_TOKEN": "replicate-stack-metrics",
    }
    with stack("replicate-stack", **env) as running:
        running.shell("from mangagen.renderers.gpu_pool import GpuPool; GpuPool().reset()")
        yield running


def outcome_of(stack: Stack, job: int) -> str:
    return stack.shell(
        "from mangagen.jobs.models import RenderAttempt;"
        f"print(RenderAttempt.objects.get(job_id={job}, index=1).outcome)"
    ).strip()


def test_generate_is_delivered_from_replicate_and_charged_once(stack, replicate):
    [(username, board, session)] = setup_people(stack, 1, "maker")
    person = Person(stack, username, board, session)
    _, attached = person.generate_and_wait()
    assert not attached
    assert person.credits() == (49, 0)
    assert [p.status for p in replicate.predictions.values()] == ["succeeded"]
    assert outcome_of(stack, person.job) == "delivered"
    # The worker counts it once the delivery has committed, and Replicate's boot (3 s)
    # as its cold start phase.
    wait_for(
        lambda: counted(stack, "mangagen_renders_total", outcome="delivered") == 1,
        every=0.5,
        what="the delivery in /metrics",
    )
    assert counted(stack, "mangagen_render_seconds_sum", phase="cold_start") >= 1.0


def test_a_speculation_left_on_review_is_cancelled_at_replicate_and_costs_nothing(stack, replicate):
    replicate.fleet.cold_boot = 60  # a boot that outlasts any wait here
    replicate.fleet.cool()
    [(username, board, session)] = setup_people(stack, 1, "shopper")
    person = Person(stack, username, board, session)
    before = set(replicate.predictions)
    job = person.reach_review(speculate=True, debounce=0)
    assert job is not None and person.answer["hint"] is True
    assert person.credits() == (49, 1)  # the speculation's hold
    wait_for(
        lambda: [p for i, p in replicate.predictions.items() if i not in before],
        timeout=30,
        what="panel one's prediction at Replicate",
    )
    person.leave(job)  # the Review page's beacons
    wait_for(
        lambda: outcome_of(stack, job) == "cancelled_at_provider",
        timeout=30,
        every=0.5,
        what="the render to be cancelled at Replicate",
    )
    mine = [p for i, p in replicate.predictions.items() if i not in before]
    assert [p.status for p in mine] == ["canceled"]
    assert person.credits() == (50, 0)  # nothing charged, the hold released
    wait_for(
        lambda: counted(stack, "mangagen_renders_total", outcome="cancelled_at_provider") == 1,
        every=0.5,
        what="the cancel at Replicate in /metrics",
    )
