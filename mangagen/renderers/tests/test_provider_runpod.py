"""The RunPod adapter through the provider layer, over real HTTP to a stand-in of a
serverless endpoint running worker-comfyui (tests/support/providers/runpod.py)."""

from __future__ import annotations

import base64

import pytest

from mangagen.renderers import RenderError, get_renderer
from mangagen.renderers.gpu_pool import GpuPool, Withdrawn
from mangagen.renderers.workflows import REFERENCES, TXT2IMG, shipped
from tests.support.providers.runpod import RunPodStandIn
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
def runpod(settings):
    with RunPodStandIn(cold_boot=1.2, render=0.2, capacity=2) as standin:
        provider_settings(settings, "runpod", standin)
        yield standin


def sent_input(runpod: RunPodStandIn) -> dict:
    [run] = runpod.seen("POST", r"/v2/abc123/run")
    return run.json()["input"]


def test_a_panel_is_a_worker_comfyui_job_and_its_cold_start_is_time_in_queue(runpod):
    result = get_renderer().render(spec(), 11)
    [run] = runpod.seen("POST", r"/v2/abc123/run")
    assert run.headers["authorization"] == "Bearer rp_test"
    given = run.json()["input"]
    assert given["images"] == []
    assert set(given["workflow"]) == set(shipped(TXT2IMG))  # no references: txt2img
    assert given["workflow"]["3"]["inputs"]["seed"] == 11
    assert "Aiko on the left, Kenji on the right" in given["workflow"]["6"]["inputs"]["text"]
    # Aiko's words conditioned on the left third of 1216 px, Kenji's on the right one.
    assert given["workflow"]["31"]["inputs"]["x"] == 0
    assert given["workflow"]["31"]["inputs"]["width"] == 400
    assert given["workflow"]["34"]["inputs"]["x"] == 800
    assert result.image.startswith(b"\x89PNG")
    phases = result.metadata["phases"]
    assert phases["cold_start"] >= 1.0  # delayTime: the worker booted
    warm = get_renderer().render(spec(), 12).metadata["phases"]
    assert warm["cold_start"] == 0.0


def test_references_go_as_worker_comfyui_images_for_its_load_image_nodes(runpod):
    aiko, kenji = with_sheet(AIKO, 40), with_sheet(KENJI, 200)
    get_renderer().render(spec(aiko, kenji), 13)
    given = sent_input(runpod)
    assert [i["name"] for i in given["images"]] == [
        "mangagen-reference-1.png",
        "mangagen-reference-2.png",
    ]
    first = given["images"][0]["image"]
    assert base64.b64decode(first.partition(",")[2]) == aiko.reference
    assert set(given["workflow"]) == set(shipped(REFERENCES))
    assert given["workflow"]["50"]["inputs"]["image"] == "mangagen-reference-1.png"
    assert given["workflow"]["60"]["inputs"]["image"] == "mangagen-reference-2.png"
    # Each reference's IP-Adapter is masked to its character's third.
    assert given["workflow"]["52"]["inputs"]["width"] == 400
    assert given["workflow"]["63"]["inputs"]["x"] == 800


def test_one_reference_fills_the_second_slot_at_weight_zero(runpod):
    get_renderer().render(spec(with_sheet(AIKO), KENJI), 14)
    workflow = sent_input(runpod)["workflow"]
    assert workflow["60"]["inputs"]["image"] == "mangagen-reference-1.png"
    assert workflow["54"]["inputs"]["weight"] == 1.0
    assert workflow["64"]["inputs"]["weight"] == 0.0


def test_a_withdrawn_render_is_cancelled_at_runpod(runpod):
    name = ticket()
    outcome = render_in_thread(get_renderer(), spec(), name)
    wait_for(lambda: runpod.jobs, what="the job")
    GpuPool().withdraw(name)
    outcome["thread"].join(timeout=10)
    assert isinstance(outcome["error"], Withdrawn) and outcome["error"].cancelled_at_provider
    [job] = runpod.cancelled()
    assert job.saved > 0


def test_a_workflow_the_worker_refuses_fails_at_once(runpod, settings):
    settings.RUNPOD_INPUT = {
        "workflow": {"9": {"class_type": "SaveImage", "inputs": {"filename_prefix": "x"}}}
    }
    with pytest.raises(RenderError, match=r"Node 9 \(required_input_missing\): images") as failed:
        get_renderer().render(spec(), 15)
    assert not failed.value.retryable
    assert len(runpod.seen("POST", r"/v2/abc123/run")) == 1


def test_a_wrong_endpoint_or_key_is_refused(runpod, settings):
    settings.RUNPOD_ENDPOINT_ID = "nope"
    with pytest.raises(RenderError, match="404") as failed:
        get_renderer().render(spec(), 16)
    assert not failed.value.retryable
    settings.RUNPOD_ENDPOINT_ID, settings.RUNPOD_API_KEY = "abc123", "wrong"
    with pytest.raises(RenderError, match="401"):
        get_renderer().render(spec(), 16)


def test_an_s3_url_output_is_fetched_only_from_an_allowed_host(runpod, settings):
    runpod.fail_next(
        200,
        {
            "id": "j",
            "status": "COMPLETED",
            "delayTime": 10,
            "executionTime": 20,
            "output": {
                "images": [
                    {"filename": "a.png", "type": "s3_url", "data": "https://bucket.example/a.png"}
                ]
            },
        },
        method="GET",
        path=r"/v2/abc123/status/.*",
    )
    with pytest.raises(
        RenderError, match=r"at 'bucket\.example', a host it is not allowed to fetch from"
    ):
        get_renderer().render(spec(), 17)
