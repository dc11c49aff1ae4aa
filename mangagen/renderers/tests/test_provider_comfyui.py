"""The ComfyUI adapter through the provider layer, by polling alone, over real HTTP to
the stand-in (tests/support/providers/comfyui.py): workflows, uploads, node_errors,
queue delete and a targeted interrupt on withdrawal."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mangagen.renderers import RenderError, get_renderer
from mangagen.renderers.base import ProviderState
from mangagen.renderers.gpu_pool import GpuPool, Withdrawn
from mangagen.renderers.workflows import REFERENCES, TXT2IMG, shipped, shipped_path
from tests.support.providers.comfyui import ComfyUIStandIn
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
def comfy(settings):
    with ComfyUIStandIn(render=0.2, load=0.3) as standin:
        provider_settings(settings, "comfyui", standin)
        yield standin


def queued_workflow(comfy: ComfyUIStandIn, index: int = 0) -> dict:
    return comfy.seen("POST", r"/prompt")[index].json()["prompt"]


def test_a_panel_runs_the_sdxl_workflow_by_polling_alone(comfy):
    result = get_renderer().render(spec(), 21)
    workflow = queued_workflow(comfy)
    assert set(workflow) == set(shipped(TXT2IMG))
    assert workflow["3"]["inputs"]["seed"] == 21
    assert workflow["5"]["inputs"] == {"width": 1216, "height": 832, "batch_size": 1}
    assert "Kenji: glasses, wearing a raincoat" in workflow["33"]["inputs"]["text"]
    assert result.image.startswith(b"\x89PNG") and result.metadata["provider"] == "comfyui"
    assert result.metadata["model"] == "sd_xl_base_1.0.safetensors"
    assert comfy.seen("GET", r"/history/.*") and comfy.seen("GET", r"/view")
    # A self-hosted server queues, it does not boot: no cold start is ever counted.
    assert result.metadata["phases"]["cold_start"] == 0.0


def test_references_are_uploaded_once_and_named_in_load_image_nodes(comfy):
    aiko, kenji = with_sheet(AIKO, 30), with_sheet(KENJI, 220)
    get_renderer().render(spec(aiko, kenji), 22)
    get_renderer().render(spec(aiko, kenji), 23)
    workflow = queued_workflow(comfy, 1)
    assert set(workflow) == set(shipped(REFERENCES))
    first, second = workflow["50"]["inputs"]["image"], workflow["60"]["inputs"]["image"]
    assert comfy.inputs[first] == aiko.reference and comfy.inputs[second] == kenji.reference
    assert len(comfy.inputs) == 2  # named by content: uploaded again, overwritten, not doubled


def test_a_workflow_that_writes_placeholders_with_spaces_still_gets_its_references(
    comfy, settings, tmp_path
):
    """`{{ reference_1 }}` is the same placeholder as `{{reference_1}}` (templates.py):
    the references it asks for are uploaded and named, not left blank."""
    text = Path(shipped_path(REFERENCES)).read_text()
    path = tmp_path / "spaced.json"
    path.write_text(re.sub(r"\{\{(reference_\d)\}\}", r"{{ \1 }}", text))
    assert "{{ reference_1 }}" in path.read_text()
    settings.COMFYUI_REFERENCE_WORKFLOW = str(path)
    aiko, kenji = with_sheet(AIKO, 30), with_sheet(KENJI, 220)
    get_renderer().render(spec(aiko, kenji), 24)
    workflow = queued_workflow(comfy)
    first, second = workflow["50"]["inputs"]["image"], workflow["60"]["inputs"]["image"]
    assert comfy.inputs[first] == aiko.reference and comfy.inputs[second] == kenji.reference


def test_a_queued_prompt_withdrawn_is_deleted_from_the_queue(comfy, settings):
    comfy.render_seconds = 30
    settings.GPU_POOL_SIZE = 2  # two in flight: the second waits in ComfyUI's own queue
    first, second, states = ticket(), ticket(), []
    running = render_in_thread(get_renderer(), spec(), first)
    wait_for(lambda: comfy.running is not None, what="the first prompt to run")
    waiting = render_in_thread(get_renderer(), spec(), second, on_state=states.append)
    wait_for(lambda: ProviderState.QUEUED in [s.state for s in states], what="it to queue")
    GpuPool().withdraw(second)
    waiting["thread"].join(timeout=10)
    assert isinstance(waiting["error"], Withdrawn) and waiting["error"].cancelled_at_provider
    assert len(comfy.deleted) == 1 and comfy.interrupted == []  # the running one goes on
    GpuPool().withdraw(first)
    running["thread"].join(timeout=10)
    assert running["error"].cancelled_at_provider
    wait_for(lambda: len(comfy.interrupted) == 1, what="the running prompt's interrupt")


@pytest.mark.parametrize("legacy", [False, True])
def test_an_interrupt_is_only_sent_for_the_prompt_that_runs(settings, legacy):
    """Even a ComfyUI that interrupts whatever runs, whatever the body says, never
    loses someone else's render: the adapter asks /queue first."""
    with ComfyUIStandIn(render=30, load=0, legacy_interrupt=legacy) as comfy:
        provider_settings(settings, "comfyui", comfy)
        settings.GPU_POOL_SIZE = 2
        other, mine, states = ticket(), ticket(), []
        someone_else = render_in_thread(get_renderer(), spec(), other)
        wait_for(lambda: comfy.running is not None, what="someone else's prompt to run")
        waiting = render_in_thread(get_renderer(), spec(), mine, on_state=states.append)
        wait_for(lambda: ProviderState.QUEUED in [s.state for s in states], what="it to queue")
        GpuPool().withdraw(mine)
        waiting["thread"].join(timeout=10)
        assert comfy.interrupted == [] and not comfy.running.interrupted
        assert not comfy.seen("POST", r"/interrupt")
        GpuPool().withdraw(other)
        someone_else["thread"].join(timeout=10)


def test_node_errors_fail_the_render_at_once_with_comfyuis_message(comfy, settings, tmp_path):
    broken = json.loads(Path(shipped_path(TXT2IMG)).read_text())
    broken["4"]["inputs"]["ckpt_name"] = "missing.safetensors"
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    settings.COMFYUI_WORKFLOW = str(path)
    with pytest.raises(RenderError) as failed:
        get_renderer().render(spec(), 24)
    assert not failed.value.retryable
    assert "Prompt outputs failed validation" in str(failed.value)
    assert "ckpt_name: 'missing.safetensors' not in" in str(failed.value)
    assert len(comfy.seen("POST", r"/prompt")) == 1


def test_a_missing_custom_node_is_named(settings):
    with ComfyUIStandIn(render=0.1, load=0, ipadapter=False) as comfy:
        provider_settings(settings, "comfyui", comfy)
        with pytest.raises(RenderError, match="node IPAdapterUnifiedLoader does not exist"):
            get_renderer().render(spec(with_sheet(AIKO)), 25)


def test_an_execution_error_fails_the_render(comfy):
    comfy.fail_next_execution = ("RuntimeError", "mat1 and mat2 shapes cannot be multiplied")
    with pytest.raises(RenderError, match="KSampler: mat1 and mat2") as failed:
        get_renderer().render(spec(), 26)
    assert not failed.value.retryable
    comfy.fail_next_execution = ("torch.OutOfMemoryError", "CUDA out of memory")
    with pytest.raises(RenderError, match="CUDA out of memory") as failed:
        get_renderer().render(spec(), 27)
    assert failed.value.retryable  # the GPU may have room the next time
