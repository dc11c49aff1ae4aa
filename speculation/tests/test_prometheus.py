"""Speculation's decisions and outcomes, counted for /metrics once committed."""

import pytest
from prometheus_client import REGISTRY

from mangagen.jobs import services as jobs
from speculation import services as speculation
from tests.support.factories import funded_account, storyboard

pytestmark = pytest.mark.django_db


def sample(name: str, **labels) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_speculation_decisions_and_outcomes_are_counted(
    user, make_user, enqueued, instant_renders, settings, django_capture_on_commit_callbacks
):
    settings.SPECULATION_MIN_CHANCE = 0
    funded_account(user)
    started = sample("mangagen_speculation_total", decision="started", reason="")
    declined = sample(
        "mangagen_speculation_total", decision="declined", reason="insufficient_credits"
    )
    attached = sample("mangagen_speculation_outcomes_total", outcome="attached")
    board = storyboard(user)
    with django_capture_on_commit_callbacks(execute=True):
        live = speculation.speculate(user=user, storyboard=board, token="t-1")
    assert live.job is not None
    poor = make_user()
    with django_capture_on_commit_callbacks(execute=True):
        speculation.speculate(user=poor, storyboard=storyboard(poor), token="t-2")
    with django_capture_on_commit_callbacks(execute=True):
        jobs.generate(user=user, storyboard=board)
    assert sample("mangagen_speculation_total", decision="started", reason="") == started + 1
    assert (
        sample("mangagen_speculation_total", decision="declined", reason="insufficient_credits")
        == declined + 1
    )
    assert sample("mangagen_speculation_outcomes_total", outcome="attached") == attached + 1


def test_a_speculation_left_on_review_counts_as_abandoned(
    user, instant_renders, enqueued, settings, django_capture_on_commit_callbacks
):
    settings.SPECULATION_MIN_CHANCE = 0
    funded_account(user)
    board = storyboard(user)
    abandoned = sample("mangagen_speculation_outcomes_total", outcome="abandoned")
    with django_capture_on_commit_callbacks(execute=True):
        speculation.speculate(user=user, storyboard=board, token="t-left")
    with django_capture_on_commit_callbacks(execute=True):
        speculation.leave(user=user, storyboard=board, token="t-left")
    assert sample("mangagen_speculation_outcomes_total", outcome="abandoned") == abandoned + 1
