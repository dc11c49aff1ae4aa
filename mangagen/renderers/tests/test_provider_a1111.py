"""The AUTOMATIC1111 adapter through the provider layer, over real HTTP to the stand-in
(tests/support/providers/a1111.py): the payload, ControlNet IP-Adapter units with
region masks, refusals, and an interrupt only for the render that runs."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from mangagen.renderers import RenderError, get_renderer
from mangagen.renderers.base import ProviderState
from mangagen.renderers.gpu_pool import GpuPool, Withdrawn
from mangagen.renderers.providers.a1111 import DEFAULT_PAYLOAD
from tests.support.providers.a1111 import A1111StandIn
from tests.support.remote_renders import (
    AIKO,
    KENJI,
    provider_settings,
    render_in_thread,
    spec,
    ticket,
    with_sheet,
)
from tests.support.waiting import wait_for


@pytest.fixture
def a1111(settings):
    with A1111StandIn(render=0.2, load=0.2) as standin:
        provider_settings(settings, "a1111", standin)
        yield standin


def test_a_panel_is_a_txt2img_call_with_the_filled_payload(a1111):
    result = get_renderer().render(spec(), 31)
    [task] = a1111.payloads.values()
    assert task["seed"] == 31 and (task["width"], task["height"]) == (1216, 832)
    assert task["sampler_name"] == DEFAULT_PAYLOAD["sampler_name"]
    assert "Aiko on the left, Kenji on the right" in task["prompt"]
    assert "speech balloons" in task["negative_prompt"]
    assert task["force_task_id"].startswith("mangagen-")
    assert "alwayson_scripts" not in task  # no references: no ControlNet
    assert result.image.startswith(b"\x89PNG")
    assert result.metadata["phases"]["cold_start"] == 0.0


def test_each_reference_is_an_ip_adapter_unit_kept_to_its_characters_third(a1111):
    aiko, kenji = with_sheet(AIKO, 30), with_sheet(KENJI, 220)
    get_renderer().render(spec(aiko, kenji), 32)
    [task] = a1111.payloads.values()
    units = task["alwayson_scripts"]["controlnet"]["args"]
    assert [u["module"] for u in units] == ["ip-adapter_clip_h"] * 2
    assert [u["model"] for u in units] == ["ip-adapter-plus_sdxl_vit-h"] * 2
    assert base64.b64decode(units[0]["image"]) == aiko.reference
    mask = Image.open(io.BytesIO(base64.b64decode(units[0]["effective_region_mask"])))
    assert mask.size == (1216, 832)
    assert mask.getpixel((100, 400)) == 255 and mask.getpixel((1000, 400)) == 0  # Aiko: left
    mask = Image.open(io.BytesIO(base64.b64decode(units[1]["effective_region_mask"])))
    assert mask.getpixel((100, 400)) == 0 and mask.getpixel((1000, 400)) == 255  # Kenji: right


def test_an_unplaced_character_s_reference_acts_on_the_whole_frame(a1111):
    unplaced = with_sheet(AIKO.__class__("Aiko", "long black hair"))
    get_renderer().render(spec(unplaced), 33)
    [task] = a1111.payloads.values()
    [unit] = task["alwayson_scripts"]["controlnet"]["args"]
    assert "effective_region_mask" not in unit


def test_a_controlnet_model_the_extension_lacks_fails_at_once(a1111, settings):
    settings.A1111_REFERENCE_MODEL = "ip-adapter_nonexistent"
    with pytest.raises(RenderError, match="model\\(ip-adapter_nonexistent\\) not found") as failed:
        get_renderer().render(spec(with_sheet(AIKO)), 34)
    assert not failed.value.retryable  # a 500 from the web UI, but the request's fault


def test_a_validation_error_fails_at_once(a1111, settings):
    settings.A1111_PAYLOAD = {**DEFAULT_PAYLOAD, "steps": "many"}
    with pytest.raises(RenderError, match="422") as failed:
        get_renderer().render(spec(), 35)
    assert not failed.value.retryable
    settings.A1111_PAYLOAD = {**DEFAULT_PAYLOAD, "sampler_name": "Heun++"}
    with pytest.raises(RenderError, match="Sampler not found"):
        get_renderer().render(spec(), 35)


def test_basic_auth(settings):
    with A1111StandIn(render=0.1, load=0, auth=("mangagen", "s3cret")) as standin:
        provider_settings(settings, "a1111", standin, A1111_AUTH="mangagen:s3cret")
        assert get_renderer().render(spec(), 36).image
        settings.A1111_AUTH = "mangagen:wrong"
        with pytest.raises(RenderError, match="401"):
            get_renderer().render(spec(), 36)


def test_withdrawn_while_running_it_is_interrupted(settings):
    with A1111StandIn(render=30, load=0) as a1111:
        provider_settings(settings, "a1111", a1111)
        name, states = ticket(), []
        outcome = render_in_thread(get_renderer(), spec(), name, on_state=states.append)
        wait_for(lambda: ProviderState.RENDERING in [s.state for s in states], what="it to run")
        GpuPool().withdraw(name)
        outcome["thread"].join(timeout=10)
        assert isinstance(outcome["error"], Withdrawn) and outcome["error"].cancelled_at_provider
        wait_for(lambda: len(a1111.interrupted) == 1, what="the interrupt to stop it")


def test_withdrawn_while_queued_behind_another_it_is_interrupted_only_once_it_runs(settings):
    with A1111StandIn(render=1.5, load=0) as a1111:
        provider_settings(settings, "a1111", a1111, GPU_POOL_SIZE=2)
        other, mine, states = ticket(), ticket(), []
        someone_else = render_in_thread(get_renderer(), spec(), other)
        wait_for(lambda: a1111.current is not None, what="someone else's render to run")
        running = a1111.current
        waiting = render_in_thread(get_renderer(), spec(), mine, on_state=states.append)
        wait_for(lambda: ProviderState.QUEUED in [s.state for s in states], what="it to queue")
        GpuPool().withdraw(mine)
        waiting["thread"].join(timeout=10)
        assert isinstance(waiting["error"], Withdrawn)
        assert not waiting["error"].cancelled_at_provider  # queued there: nothing to stop yet
        someone_else["thread"].join(timeout=30)
        assert "result" in someone_else, "someone else's render was not interrupted"
        wait_for(lambda: len(a1111.interrupted) == 1, what="mine to be stopped once it ran")
        assert a1111.interrupted != [running]
