"""Jobs on a real provider's shape: the Replicate stand-in over HTTP, the job state
machine on PostgreSQL, the render in a thread of its own as a worker's is.

What the person and the operator see: where the render stands at the provider
(`panel.provider`), a render withdrawn at the provider when its job ends (nothing
charged, what it saved recorded, counted as `cancelled_at_provider` for /metrics),
a refusal or a provider that is down failing with "nothing was charged", every
render's phases kept, and its picture in the media storage (local or S3)."""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone
from prometheus_client import REGISTRY

from ledger.models import Hold, Transfer
from mangagen.jobs import services, tasks
from mangagen.jobs.events import EventType
from mangagen.jobs.models import Job, RenderAttempt
from mangagen.kernel.credit_history import public_reason
from mangagen.observability import metrics
from mangagen.observability.metrics import RenderOutcome
from mangagen.renderers.models import RenderSample
from mangagen.renderers.provider_http import PROVIDER_DOWN
from mangagen.renderers.providers.replicate import DEFAULT_INPUT
from tests.support.factories import balance
from tests.support.ledger_invariants import assert_ledger_invariants
from tests.support.providers.replicate import ReplicateStandIn
from tests.support.remote_renders import provider_settings
from tests.support.stack import free_port
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def replicate(settings, tmp_path, enqueued):
    settings.MEDIA_ROOT = tmp_path
    settings.SPECULATION_LOOKAHEAD = 0
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    with ReplicateStandIn(cold_boot=1.5, render=0.3, capacity=2) as standin:
        provider_settings(settings, "replicate", standin)
        yield standin


def renders_counted(outcome: RenderOutcome) -> float:
    """`mangagen_renders_total{outcome}` as this process counted it."""
    return REGISTRY.get_sample_value(metrics.RENDERS_TOTAL, {"outcome": outcome}) or 0.0


def provider_states(job: Job) -> list[str]:
    events = job.events.filter(type=EventType.PANEL_PROVIDER).order_by("seq")
    return [e.data["state"] for e in events]


def render_in_a_worker_thread(job_id: int, index: int, attempt: int) -> dict:
    """The render task, as a worker runs it (its outcome counted for /metrics)."""
    outcome: dict = {}

    def run():
        try:
            outcome["result"] = tasks.render_panel.apply(args=(job_id, index, attempt)).get()
        except BaseException as exc:
            outcome["error"] = exc
        finally:
            connections.close_all()

    outcome["thread"] = threading.Thread(target=run, daemon=True)
    outcome["thread"].start()
    return outcome


def test_a_confirmed_render_is_delivered_charged_once_and_its_phases_kept(
    replicate, media, user, account, board, run
):
    job, _ = services.generate(user=user, storyboard=board)
    (job_id, index, attempt), _ = run.take()
    assert services.perform_render(job_id=job_id, index=index, attempt=attempt) == "delivered"
    assert balance(account) == (9, 0)
    # The provider's picture is kept through the storage API: on disk, or in the bucket
    # with nothing in MEDIA_ROOT (the `media` fixture checks that on s3).
    stored = job.panels.get(index=1).image
    assert media.names(f"renders/{job.pk}") == [stored.name]
    with stored.open("rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    assert "booting" in provider_states(job)  # the page said the GPU was warming up
    recorded = RenderAttempt.objects.get(job=job, index=1, attempt=1)
    assert recorded.outcome == RenderOutcome.DELIVERED
    assert recorded.phases["cold_start"] >= 1.0 and recorded.phases["render"] > 0
    sample = RenderSample.objects.get()
    assert (sample.renderer, sample.model) == ("replicate", "black-forest-labs/flux-schnell")
    assert sample.cold_start == recorded.phases["cold_start"]
    assert_ledger_invariants()


def test_a_speculation_withdrawn_while_replicate_boots_is_cancelled_there_and_costs_nothing(
    replicate, user, account, board, run
):
    deadline = timezone.now() + timedelta(minutes=10)
    job = services.start_job(user=user, storyboard=board, confirmed=False, confirm_by=deadline)
    (job_id, index, attempt), _ = run.take()
    cancelled = renders_counted(RenderOutcome.CANCELLED_AT_PROVIDER)
    render = render_in_a_worker_thread(job_id, index, attempt)
    wait_for(lambda: "booting" in provider_states(job), what="the worker's boot to show")
    services.cancel_job(job=job, reason="The person left Review.", only_if_unconfirmed=True)
    render["thread"].join(timeout=15)
    assert render["result"] == "cancelled_at_provider"
    assert renders_counted(RenderOutcome.CANCELLED_AT_PROVIDER) == cancelled + 1
    [prediction] = replicate.predictions.values()
    assert prediction.status == "canceled"
    recorded = RenderAttempt.objects.get(job=job, index=1, attempt=1)
    assert recorded.outcome == RenderOutcome.CANCELLED_AT_PROVIDER
    # The rest of the boot and the render, as the prior (20 s + 2 s) still predicts them.
    assert recorded.provider_seconds_saved > 2.0
    assert balance(account) == (10, 0)
    assert recorded.hold.state == Hold.State.RELEASED
    assert not RenderSample.objects.exists()  # a cut-short render teaches nothing
    assert_ledger_invariants()


def test_a_refusal_fails_at_once_and_the_person_is_told_nothing_was_charged(
    replicate, settings, user, account, board, run, caplog
):
    settings.REPLICATE_INPUT = {**DEFAULT_INPUT, "guidance": 3.5}
    job, _ = services.generate(user=user, storyboard=board)
    (job_id, index, attempt), _ = run.take()
    with caplog.at_level(logging.WARNING):
        assert tasks.render_panel.apply(args=(job_id, index, attempt)).get() == "failed"
    panel = job.panels.get(index=1)
    assert panel.state == "failed" and panel.error == "The render failed; nothing was charged."
    assert not job.events.filter(type=EventType.PANEL_RETRYING).exists()
    assert len(replicate.seen("POST", r"/v1/models/.*/predictions")) == 1
    assert "Additional property guidance is not allowed" in caplog.text
    release = Transfer.objects.get(pending=panel.hold.pending_transfer)
    assert "Additional property guidance" in release.reason  # for operators
    assert public_reason(release) == "The render failed; nothing was charged."
    assert balance(account) == (10, 0)
    assert RenderAttempt.objects.get(job=job).outcome == RenderOutcome.FAILED


def test_a_provider_that_is_down_shows_as_such_then_fails_clearly(
    replicate, settings, user, account, board, run
):
    settings.REPLICATE_BASE_URL = f"http://127.0.0.1:{free_port()}"  # nobody listens
    settings.RENDER_HTTP_RETRIES = 1
    job, _ = services.generate(user=user, storyboard=board)
    (job_id, index, attempt), _ = run.take()
    assert tasks.render_panel.apply(args=(job_id, index, attempt)).get() == "failed"
    unreachable = job.events.filter(type=EventType.PANEL_PROVIDER, data__state="unreachable")
    assert unreachable.exists()
    first = unreachable.order_by("seq").first()
    assert "not answering" in first.data["detail"] and first.data["retry_in"] == 0.05
    assert job.events.filter(type=EventType.PANEL_RETRYING).count() == tasks.MAX_RENDER_RETRIES
    panel = job.panels.get(index=1)
    assert panel.state == "failed" and panel.error == PROVIDER_DOWN
    assert balance(account) == (10, 0)


def test_a_job_its_owner_cancels_stops_its_render_at_the_provider(
    replicate, user, account, board, run
):
    """Mid-render too: Replicate stops a prediction that is processing."""
    replicate.render_seconds = 30
    job, _ = services.generate(user=user, storyboard=board)
    (job_id, index, attempt), _ = run.take()
    cancelled = renders_counted(RenderOutcome.CANCELLED_AT_PROVIDER)
    render = render_in_a_worker_thread(job_id, index, attempt)
    wait_for(lambda: "rendering" in provider_states(job), timeout=30, what="it to draw")
    services.cancel_job(job=job)
    render["thread"].join(timeout=15)
    assert render["result"] == "cancelled_at_provider"
    assert renders_counted(RenderOutcome.CANCELLED_AT_PROVIDER) == cancelled + 1
    assert [p.status for p in replicate.predictions.values()] == ["canceled"]
    recorded = RenderAttempt.objects.get(job=job)
    assert recorded.phases["render"] > 0
    assert balance(account) == (10, 0)
