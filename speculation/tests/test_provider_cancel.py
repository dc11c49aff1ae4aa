"""A speculation nobody will see is cancelled at the provider, and the admin
Speculation page shows what that saved. On the Replicate stand-in, over HTTP, with
the render in a worker's thread."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from mangagen.jobs import services as jobs
from mangagen.jobs.events import EventType
from mangagen.jobs.models import Job
from speculation import report, services
from speculation.models import Outcome
from tests.support.factories import balance
from tests.support.providers.replicate import ReplicateStandIn
from tests.support.remote_renders import provider_settings
from tests.support.speculation import fund, make_board
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def replicate(settings, tmp_path, enqueued):
    settings.MEDIA_ROOT = tmp_path
    settings.SPECULATION_LOOKAHEAD = 0
    settings.SPECULATION_MIN_CHANCE = 0
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    with ReplicateStandIn(cold_boot=3.0, render=0.5) as standin:
        provider_settings(settings, "replicate", standin)
        yield standin


def test_leaving_review_cancels_panel_one_at_the_provider_and_the_page_shows_it(
    replicate, user, make_user, client, run
):
    fund(user, 3)
    board = make_board(user)
    speculation = services.speculate(user=user, storyboard=board, token="visit-1")
    assert speculation.outcome == Outcome.LIVE
    (job_id, index, attempt), _ = run.take()
    outcome: dict = {}

    def worker():
        outcome["result"] = jobs.perform_render(job_id=job_id, index=index, attempt=attempt)
        connections.close_all()

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    job = Job.objects.get(pk=job_id)
    wait_for(
        lambda: job.events.filter(type=EventType.PANEL_PROVIDER, data__state="booting").exists(),
        what="the provider to show the worker booting",
    )
    services.leave(user=user, storyboard=board, token="visit-1")  # the page's beacon
    thread.join(timeout=15)
    assert outcome["result"] == "cancelled_at_provider"
    assert [p.status for p in replicate.predictions.values()] == ["canceled"]
    assert balance(user) == (3, 0)

    day = report.report()[0]
    assert day.cancelled_at_provider == 1 and day.provider_seconds_saved > 0
    assert day.renders_wasted == 0  # stopped before it drew: no GPU time thrown away
    client.force_login(make_user("boss", is_staff=True, is_superuser=True))
    html = client.get("/admin/speculation/speculation/").content.decode()
    assert "Cancelled at the provider" in html
    assert "1 render, about" in html and "s of provider time saved" in html
