"""Roughs and finals from a rough through every remote renderer, over real HTTP to the
providers' stand-ins (tests/support/providers/): the rough goes to the provider's draft
model or workflow (small, few steps), and the final from it carries the rough as that
provider takes it (img2img's init image, an img2img workflow's LoadImage, FLUX dev's
`image`, OpenAI's edits), at the page cell's shape."""

from __future__ import annotations

import base64
import io
import json
from dataclasses import replace

import pytest
from PIL import Image, ImageDraw

from mangagen.renderers import get_renderer
from mangagen.renderers.base import FromRoughSpec, RenderError
from mangagen.renderers.workflows import FROM_ROUGH, ROUGH, shipped
from tests.support.providers.a1111 import A1111StandIn
from tests.support.providers.base import multipart
from tests.support.providers.comfyui import ComfyUIStandIn
from tests.support.providers.openai_compatible import OpenAIStandIn, SdCppStandIn
from tests.support.providers.replicate import ReplicateStandIn, data_of
from tests.support.providers.runpod import RunPodStandIn
from tests.support.remote_renders import provider_settings, spec

TALL = "2:3"  # a page cell taller than wide


def rough_picture(size=(256, 384)) -> bytes:
    """A rough with a mark at its top left, to see where it lands in the request."""
    image = Image.new("RGB", size, (250, 248, 240))
    ImageDraw.Draw(image).rectangle((0, 0, size[0] // 4, size[1] // 4), fill=(60, 90, 150))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def opened(data: bytes) -> Image.Image:
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        return image.copy()


def is_the_rough(picture: Image.Image) -> bool:
    """The rough (or its scaled copy): its mark at the top left, paper elsewhere."""
    rgb = picture.convert("RGB")
    w, h = rgb.size
    mark, paper = rgb.getpixel((w // 10, h // 10)), rgb.getpixel((w * 3 // 4, h * 3 // 4))
    return mark[2] > mark[0] + 40 and min(paper) > 200


def final_spec():
    return FromRoughSpec(spec(aspect=TALL), rough_picture())


def tall(width: int, height: int) -> bool:
    return abs(width / height - 2 / 3) < 0.05


# --- Replicate: a fast model for roughs, FLUX dev's img2img for a final --------------------


@pytest.fixture
def replicate(settings):
    with ReplicateStandIn(cold_boot=0.0, render=0.05) as standin:
        provider_settings(
            settings,
            "replicate",
            standin,
            REPLICATE_ROUGH_MODEL="black-forest-labs/flux-schnell",
            REPLICATE_ROUGH_INPUT=None,
            REPLICATE_FROM_ROUGH_MODEL="black-forest-labs/flux-dev",
            REPLICATE_FROM_ROUGH_INPUT=None,
            REPLICATE_MODEL="black-forest-labs/flux-kontext-dev",
        )
        yield standin


def test_replicate_draws_a_rough_with_its_rough_model_and_a_final_from_it_with_flux_dev(
    replicate,
):
    rough = get_renderer().rough(spec(aspect=TALL), 11)
    final = get_renderer().from_rough(final_spec(), 11)
    drafted, drawn = replicate.predictions.values()
    assert drafted.model == "black-forest-labs/flux-schnell"
    assert drafted.input["megapixels"] == "0.25" and drafted.input["num_inference_steps"] == 1
    assert drafted.input["aspect_ratio"] == "2:3" and drafted.input["seed"] == 11
    assert rough.metadata["model"] == "black-forest-labs/flux-schnell"  # learned apart
    assert drawn.model == "black-forest-labs/flux-dev" and drawn.input["seed"] == 11
    sent = data_of(drawn.input["image"])
    assert sent is not None and tall(*sent.size) and is_the_rough(sent)
    assert 0 < drawn.input["prompt_strength"] < 1
    assert final.metadata["from_rough"] is True


def test_replicate_without_a_from_rough_model_keeps_the_roughs_seed_alone(replicate, settings):
    settings.REPLICATE_FROM_ROUGH_MODEL = ""
    settings.REPLICATE_MODEL = "black-forest-labs/flux-schnell"
    get_renderer().from_rough(final_spec(), 12)
    [drawn] = replicate.predictions.values()
    assert drawn.model == "black-forest-labs/flux-schnell" and drawn.input["seed"] == 12
    assert "image" not in drawn.input and drawn.input["aspect_ratio"] == "2:3"


# --- ComfyUI: the Turbo workflow, and the img2img workflow with {{rough}} uploaded -----------


def test_comfyui_queues_the_rough_workflow_and_the_from_rough_workflow_with_the_upload(settings):
    with ComfyUIStandIn(render=0.05) as comfy:
        provider_settings(
            settings, "comfyui", comfy, COMFYUI_ROUGH_WORKFLOW="", COMFYUI_FROM_ROUGH_WORKFLOW=""
        )
        rough = get_renderer().rough(spec(aspect=TALL), 21)
        get_renderer().from_rough(final_spec(), 21)
        drafted, drawn = (r.json()["prompt"] for r in comfy.seen("POST", r"/prompt"))
        uploads = dict(comfy.inputs)
    nodes = {n["class_type"]: n["inputs"] for n in drafted.values()}
    assert nodes["CheckpointLoaderSimple"]["ckpt_name"] == "sd_xl_turbo_1.0_fp16.safetensors"
    assert nodes["KSampler"]["steps"] == 1 and nodes["KSampler"]["seed"] == 21
    latent = nodes["EmptyLatentImage"]
    assert tall(latent["width"], latent["height"]) and latent["width"] * latent["height"] < 400_000
    assert rough.metadata["model"] == "sd_xl_turbo_1.0_fp16.safetensors"
    nodes = {n["class_type"]: n["inputs"] for n in drawn.values()}
    assert nodes["KSampler"]["seed"] == 21 and nodes["KSampler"]["denoise"] < 1
    loaded = opened(uploads[nodes["LoadImage"]["image"]])
    assert tall(*loaded.size) and is_the_rough(loaded)
    assert shipped(ROUGH)["3"]["inputs"]["steps"] == 1 and "{{rough}}" in json.dumps(
        shipped(FROM_ROUGH)
    )


# --- RunPod (worker-comfyui): the same workflows, the rough in `images` ----------------------


def test_runpod_sends_the_rough_workflow_and_the_rough_in_images(settings):
    with RunPodStandIn(cold_boot=0.0, render=0.05) as runpod:
        provider_settings(settings, "runpod", runpod)
        get_renderer().rough(spec(aspect=TALL), 31)
        get_renderer().from_rough(final_spec(), 31)
        drafted, drawn = (r.json()["input"] for r in runpod.seen("POST", r"/v2/abc123/run"))
    nodes = {n["class_type"]: n["inputs"] for n in drafted["workflow"].values()}
    assert nodes["CheckpointLoaderSimple"]["ckpt_name"] == "sd_xl_turbo_1.0_fp16.safetensors"
    assert not drafted.get("images")
    nodes = {n["class_type"]: n["inputs"] for n in drawn["workflow"].values()}
    [image] = drawn["images"]
    assert nodes["LoadImage"]["image"] == image["name"] == "mangagen-rough.png"
    sent = opened(base64.b64decode(image["image"].partition(",")[2]))
    assert tall(*sent.size) and is_the_rough(sent)


def test_runpod_with_an_input_of_ones_own_sends_the_rough_only_where_it_names_it(settings):
    """`RUNPOD_INPUT` for a worker of one's own (not worker-comfyui: the stand-in refuses
    it, after the request was seen): a rough is that input as a panel's, with no rough;
    a final from a rough gets the rough as a data URL where the input names `{{rough}}`,
    and without it only the rough's seed."""
    own = {
        "prompt": "{{prompt}}",
        "seed": "{{seed}}",
        "width": "{{width}}",
        "height": "{{height}}",
        "init_image": "{{rough}}",
    }
    with RunPodStandIn(cold_boot=0.0, render=0.05) as runpod:
        provider_settings(settings, "runpod", runpod)
        settings.RUNPOD_INPUT = own
        for draw in (
            lambda: get_renderer().rough(spec(aspect=TALL), 31),
            lambda: get_renderer().from_rough(final_spec(), 31),
        ):
            with pytest.raises(RenderError):  # worker-comfyui wants a workflow
                draw()
        settings.RUNPOD_INPUT = {k: v for k, v in own.items() if k != "init_image"}
        with pytest.raises(RenderError):
            get_renderer().from_rough(final_spec(), 31)
        drafted, drawn, seeded = (r.json()["input"] for r in runpod.seen("POST", r"/v2/abc123/run"))
    assert drafted["seed"] == drawn["seed"] == seeded["seed"] == 31
    assert drafted["init_image"] == "" and tall(drafted["width"], drafted["height"])
    assert drawn["init_image"].startswith("data:image/png;base64,")
    assert is_the_rough(opened(base64.b64decode(drawn["init_image"].partition(",")[2])))
    assert tall(drawn["width"], drawn["height"])
    assert "data:image" not in json.dumps(seeded)


# --- AUTOMATIC1111: the rough payload on txt2img, img2img with the rough -------------------


def test_a1111_draws_a_rough_in_few_steps_and_a_final_by_img2img_from_it(settings):
    with A1111StandIn(render=0.05, load=0.0) as a1111:
        provider_settings(settings, "a1111", a1111, A1111_ROUGH_PAYLOAD=None)
        get_renderer().rough(spec(aspect=TALL), 41)
        get_renderer().from_rough(final_spec(), 41)
        [drafted] = [r.json() for r in a1111.seen("POST", r"/sdapi/v1/txt2img")]
        [drawn] = [r.json() for r in a1111.seen("POST", r"/sdapi/v1/img2img")]
    assert drafted["steps"] == 8 and drafted["seed"] == 41
    assert tall(drafted["width"], drafted["height"])
    assert drafted["width"] * drafted["height"] < 400_000
    assert drawn["seed"] == 41 and drawn["denoising_strength"] == 0.55
    assert drawn["steps"] == 25 and tall(drawn["width"], drawn["height"])
    sent = opened(base64.b64decode(drawn["init_images"][0]))
    assert sent.size == (drawn["width"], drawn["height"]) and is_the_rough(sent)
    assert "mask" not in drawn


# --- OpenAI: a low-quality generation, then an edit of the rough ------------------------------


def test_openai_draws_a_rough_at_low_quality_and_edits_it_into_the_final(settings):
    with OpenAIStandIn() as openai:
        settings.RENDERER = "openai"
        settings.IMAGES_BASE_URL = openai.url
        settings.IMAGES_API_KEY = "sk-test"
        settings.IMAGES_MODEL = "gpt-image-1"
        settings.IMAGES_SERVER = "openai"
        settings.IMAGES_SIZE = "1024x1024"
        settings.IMAGES_REFERENCE_ENDPOINT = ""
        settings.IMAGES_ROUGH_QUALITY = "low"
        settings.RENDER_HTTP_RETRIES = 0
        rough = get_renderer().rough(spec(aspect=TALL), 51)
        final = get_renderer().from_rough(final_spec(), 51)
        [drafted] = openai.generated
        [edit] = openai.seen("POST", r"/v1/images/edits")
    assert drafted["quality"] == "low" and drafted["size"] == "1024x1536"  # its nearest shape
    assert rough.metadata["model"] == "gpt-image-1:low"
    fields, files = multipart(edit)
    assert fields["size"] == "1024x1536" and "mask" not in files
    sent = opened(files["image"][0][1])
    assert is_the_rough(sent) and final.metadata["from_rough"] is True


def test_stable_diffusion_cpp_takes_the_rough_as_its_init_image(settings):
    with SdCppStandIn() as sdcpp:
        settings.RENDERER = "openai"
        settings.IMAGES_BASE_URL = sdcpp.url
        settings.IMAGES_SERVER = "sdcpp"
        settings.IMAGES_SIZE = "768x512"
        settings.IMAGES_REFERENCE_ENDPOINT = ""
        settings.RENDER_HTTP_RETRIES = 0
        get_renderer().from_rough(final_spec(), 61)
        [made] = sdcpp.made
    assert made["init_image"] is not None and is_the_rough(opened(made["init_image"]))


def test_a_panel_is_asked_at_its_cells_shape_everywhere(settings):
    with A1111StandIn(render=0.05, load=0.0) as a1111:
        provider_settings(settings, "a1111", a1111)
        get_renderer().render(replace(spec(), aspect=TALL), 71)
        get_renderer().render(spec(), 72)
        shaped, plain = (r.json() for r in a1111.seen("POST", r"/sdapi/v1/txt2img"))
    assert tall(shaped["width"], shaped["height"])
    assert (plain["width"], plain["height"]) == (1216, 832)  # no cell: the provider's own
