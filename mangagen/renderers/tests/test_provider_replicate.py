"""The Replicate adapter through the provider layer, over real HTTP to the stand-in
(tests/support/providers/replicate.py): statuses and the cold start as Replicate
shows them, cancel on withdrawal, refusals and retries, references."""

from __future__ import annotations

import io
import json
import uuid

import pytest
import requests
from PIL import Image

from mangagen.renderers import CharacterSpec, PlaceSpec, RenderError, get_renderer
from mangagen.renderers.base import ProviderState
from mangagen.renderers.gpu_pool import GpuPool, Priority, Withdrawn
from mangagen.renderers.provider_http import PROVIDER_DOWN
from mangagen.renderers.providers.replicate import DEFAULT_INPUT, data_url
from mangagen.renderers.remote import Submission
from tests.support.providers.replicate import ReplicateStandIn, version_of
from tests.support.remote_renders import png, provider_settings, render_in_thread, spec
from tests.support.waiting import wait_for


@pytest.fixture
def replicate(settings):
    with ReplicateStandIn(cold_boot=1.2, render=0.2, capacity=2) as standin:
        provider_settings(settings, "replicate", standin)
        yield standin


def test_a_panel_is_a_prediction_with_the_filled_template(replicate):
    states = []
    result = get_renderer().render(spec(), 7, on_state=states.append)
    [create] = replicate.seen("POST", r"/v1/models/black-forest-labs/flux-schnell/predictions")
    assert create.headers["authorization"] == "Bearer r8_test"
    sent = create.json()["input"]
    assert sent["seed"] == 7 and sent["aspect_ratio"] == "3:2"  # 1216×832 for a 768×544 panel
    assert "Aiko on the left, Kenji on the right" in sent["prompt"]
    assert "Kenji: glasses, wearing a raincoat" in sent["prompt"]
    assert {k: v for k, v in sent.items() if k not in ("prompt", "seed", "aspect_ratio")} == {
        k: v for k, v in DEFAULT_INPUT.items() if k not in ("prompt", "seed", "aspect_ratio")
    }
    # The stand-in answered WebP from its delivery URL; what is kept is a fresh PNG.
    assert result.content_type == "image/png" and result.image.startswith(b"\x89PNG")
    assert Image.open(io.BytesIO(result.image)).format == "PNG"
    assert result.metadata["provider"] == "replicate"
    assert result.metadata["model"] == "black-forest-labs/flux-schnell"
    # A cold worker: `starting` past a second is reported as booting (each state once,
    # in order; a state shorter than a poll may be missed).
    seen = [s.state for s in states]
    assert ProviderState.BOOTING in seen
    order = [ProviderState.STARTING, ProviderState.BOOTING, ProviderState.RENDERING]
    assert seen == sorted(seen, key=order.index) and len(set(seen)) == len(seen)


def test_the_cold_start_is_what_replicate_showed_as_starting(replicate):
    cold = get_renderer().render(spec(), 1).metadata["phases"]
    assert cold["cold_start"] >= 1.0  # the worker's boot, seen as `starting`
    assert cold["render"] >= 0.15
    warm = get_renderer().render(spec(), 2).metadata["phases"]
    assert warm["cold_start"] == 0.0  # a warm worker: `starting` only for a moment
    assert set(warm) == {"queued", "cold_start", "render"}
    assert replicate.boots() == 1


def test_a_model_with_a_version_goes_to_predictions(replicate, settings):
    version = version_of("black-forest-labs/flux-schnell")
    settings.REPLICATE_MODEL = f"black-forest-labs/flux-schnell:{version}"
    get_renderer().render(spec(), 3)
    [create] = replicate.seen("POST", r"/v1/predictions")
    assert create.json()["version"] == version


def test_a_render_withdrawn_while_the_worker_boots_is_cancelled_at_replicate(replicate):
    renderer, ticket = get_renderer(), f"t:{uuid.uuid4()}"
    outcome = render_in_thread(renderer, spec(), ticket)
    wait_for(lambda: replicate.predictions, what="the prediction")
    [prediction] = replicate.predictions.values()
    assert prediction.status == "starting"
    GpuPool().withdraw(ticket)
    outcome["thread"].join(timeout=10)
    error = outcome.get("error")
    assert isinstance(error, Withdrawn) and error.cancelled_at_provider
    assert prediction.status == "canceled" and prediction.saved > 0
    assert error.phases["render"] == 0.0
    assert len(replicate.seen("POST", rf"/v1/predictions/{prediction.id}/cancel")) == 1


def test_a_render_withdrawn_while_processing_is_cancelled_too(replicate, settings):
    replicate.render_seconds = 30
    renderer, ticket, states = get_renderer(), f"t:{uuid.uuid4()}", []
    outcome = render_in_thread(renderer, spec(), ticket, on_state=states.append)
    wait_for(
        lambda: ProviderState.RENDERING in [s.state for s in states],
        what="the render to be seen processing",
    )
    GpuPool().withdraw(ticket)
    outcome["thread"].join(timeout=10)
    assert isinstance(outcome["error"], Withdrawn) and outcome["error"].cancelled_at_provider
    assert outcome["error"].state == ProviderState.RENDERING
    assert [p.status for p in replicate.predictions.values()] == ["canceled"]


def test_a_render_withdrawn_before_it_had_a_slot_never_reaches_replicate(replicate, settings):
    settings.GPU_POOL_SIZE = 1
    pool = GpuPool()
    holder = pool.acquire(ticket="someone else", priority=Priority.CONFIRMED)
    try:
        ticket = f"t:{uuid.uuid4()}"
        outcome = render_in_thread(get_renderer(), spec(), ticket)
        wait_for(lambda: pool.state().waiting_confirmed == 1, what="it to wait for a slot")
        pool.withdraw(ticket)
        outcome["thread"].join(timeout=10)
    finally:
        pool.release(holder)
    assert isinstance(outcome["error"], Withdrawn)
    assert not outcome["error"].cancelled_at_provider
    assert replicate.predictions == {}


def test_429_is_tried_again_after_retry_after(replicate):
    replicate.fail_next(
        429,
        {
            "title": "Request was throttled",
            "detail": "Expected available in 1 second.",
            "status": 429,
        },
        method="POST",
        path=r"/v1/models/.*",
        headers={"Retry-After": "1"},
    )
    states = []
    get_renderer().render(spec(), 4, on_state=states.append)
    first, second = replicate.seen("POST", r"/v1/models/.*/predictions")
    assert second.at - first.at >= 1.0
    [slow] = [s for s in states if s.state == ProviderState.UNREACHABLE]
    assert slow.retry_in == 1.0 and "slow down" in slow.detail


def test_5xx_is_retried_with_backoff_then_fails_as_the_provider_being_down(replicate):
    replicate.fail_next(503, {"detail": "busy"}, method="GET", path=r"/v1/predictions/.*")
    assert get_renderer().render(spec(), 4).image  # one 503 while polling: tried again
    replicate.fail_next(502, {"detail": "bad gateway"}, method="POST", times=10)
    with pytest.raises(RenderError) as failed:
        get_renderer().render(spec(), 5)
    assert failed.value.retryable and failed.value.public == PROVIDER_DOWN
    assert "failed 3 times" in str(failed.value)


def test_a_validation_error_fails_at_once_with_replicates_message(replicate, settings):
    settings.REPLICATE_INPUT = {**DEFAULT_INPUT, "guidance": 3.5}
    with pytest.raises(RenderError) as failed:
        get_renderer().render(spec(), 6)
    assert not failed.value.retryable
    assert "Additional property guidance is not allowed" in str(failed.value)
    assert failed.value.public == "The render failed; nothing was charged."
    assert len(replicate.seen("POST", r"/v1/models/.*/predictions")) == 1


def test_a_model_error_fails_the_render(replicate):
    replicate.fail_with = "NSFW content detected. Try running it again, or try a different prompt."
    with pytest.raises(RenderError, match="NSFW content detected") as failed:
        get_renderer().render(spec(), 6)
    assert not failed.value.retryable


def test_a_wrong_token_is_refused_once(replicate, settings):
    settings.REPLICATE_API_TOKEN = "r8_wrong"
    with pytest.raises(RenderError, match="401") as failed:
        get_renderer().render(spec(), 6)
    assert not failed.value.retryable


@pytest.mark.parametrize(
    "url",
    ["http://evil.example/out-0.webp", "http://127.0.0.1:9/out-0.webp", "file:///etc/passwd"],
)
def test_an_output_from_another_host_is_never_fetched(replicate, url):
    replicate.fail_next(
        200,
        {"id": "x", "status": "succeeded", "output": [url], "created_at": "2026-01-01T00:00:00Z"},
        method="GET",
        path=r"/v1/predictions/.*",
    )
    with pytest.raises(RenderError, match="not allowed to fetch from") as failed:
        get_renderer().render(spec(), 6)
    assert not failed.value.retryable


def test_references_are_data_urls_in_the_template(replicate, settings):
    settings.REPLICATE_MODEL = "black-forest-labs/flux-kontext-dev"
    settings.REPLICATE_INPUT = {
        "prompt": "{{prompt}}",
        "input_image": "{{reference_1}}",
        "seed": "{{seed}}",
        "output_format": "png",
    }
    sheet = png()
    aiko = CharacterSpec("Aiko", "long black hair", sheet="a" * 64, reference=sheet)
    get_renderer().render(spec(aiko, place=PlaceSpec("Rooftop", "a fenced roof")), 8)
    [create] = replicate.seen("POST", r"/v1/models/.*/predictions")
    sent = create.json()["input"]
    assert sent["input_image"] == data_url(sheet)
    assert (
        "image 1 is Aiko" in sent["prompt"] and "Setting: Rooftop, a fenced roof" in sent["prompt"]
    )


def test_a_large_reference_is_sent_as_a_smaller_jpeg():
    noisy = Image.effect_noise((1400, 1400), 90).convert("RGB")
    buffer = io.BytesIO()
    noisy.save(buffer, format="PNG")
    assert len(buffer.getvalue()) > 1024 * 1024
    url = data_url(buffer.getvalue())
    assert url.startswith("data:image/jpeg;base64,") and len(url) < 1024 * 1024


def test_a_render_past_its_deadline_is_cancelled_at_replicate(replicate):
    replicate.render_seconds = 30
    renderer = get_renderer()
    renderer.deadline_seconds = 1.5
    with pytest.raises(RenderError, match="did not finish") as failed:
        renderer.render(spec(), 9)
    assert failed.value.retryable
    assert [p.status for p in replicate.predictions.values()] == ["canceled"]


def test_the_template_setting_refuses_an_unknown_placeholder():
    from mangagen.renderers import templates

    with pytest.raises(templates.TemplateError, match=r"\{\{promt\}\}"):
        templates.load(json.dumps({"prompt": "{{promt}}"}), what="REPLICATE_INPUT")


def test_a_render_sent_again_after_its_worker_died_follows_the_prediction_it_made(replicate):
    """The worker died after submitting (its ticket's submission is still remembered):
    the render sent again follows that prediction rather than paying for another."""
    renderer, ticket = get_renderer(), f"t:{uuid.uuid4()}"
    created = requests.post(
        f"{replicate.url}/v1/models/black-forest-labs/flux-schnell/predictions",
        json={"input": {"prompt": "made by a worker that died"}},
        headers={"Authorization": "Bearer r8_test"},
        timeout=5,
    ).json()
    renderer._remember(ticket, Submission(id=created["id"]))
    result = renderer.render(spec(), 3, ticket=ticket)
    assert result.metadata["submission"] == created["id"]
    assert len(replicate.seen("POST", r"/v1/models/.*/predictions")) == 1  # none made again
    assert renderer._resumed(ticket) is None  # forgotten once it ended
