"""Touch-ups through every remote renderer, over real HTTP to the providers' stand-ins
(tests/support/providers/): each redraws a region in its own request shape (AUTOMATIC1111
img2img, ComfyUI and worker-comfyui inpaint workflows, Replicate's FLUX Fill, OpenAI's
/images/edits) with the mask in its own polarity, as the provider reads it; and the
provider's picture composited back into the original keeps every pixel outside the
region and its feather, whatever the provider did there."""

from __future__ import annotations

import base64
import io
import json

import pytest
import requests
from PIL import Image, ImageChops, ImageDraw

from mangagen.jobs import regions
from mangagen.renderers import RenderError, RenderResult, get_renderer
from mangagen.renderers.base import TouchUpSpec
from mangagen.renderers.workflows import INPAINT, shipped
from tests.support.providers.a1111 import A1111StandIn
from tests.support.providers.comfyui import ComfyUIStandIn
from tests.support.providers.openai_compatible import OpenAIStandIn
from tests.support.providers.replicate import ReplicateStandIn
from tests.support.providers.runpod import RunPodStandIn
from tests.support.remote_renders import (
    AIKO,
    KENJI,
    provider_settings,
    spec,
    with_sheet,
)

# The picture now (half the providers' 1216×832, so every adapter scales it) and the box
# redrawn: fractions of the picture, from its top left.
WIDTH, HEIGHT = 608, 416
BOX = (0.25, 0.25, 0.5, 0.5)


def original() -> bytes:
    """A picture with detail everywhere, so any pixel the composite got wrong shows."""
    image = Image.new("RGB", (WIDTH, HEIGHT), (90, 60, 30))
    pen = ImageDraw.Draw(image)
    for x in range(0, WIDTH, 16):
        pen.line((x, 0, WIDTH - x, HEIGHT), fill=(x % 256, 120, 200 - x % 200), width=3)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def touch(*characters) -> TouchUpSpec:
    return TouchUpSpec(
        panel=spec(*characters),
        image=original(),
        mask=regions.box_mask(BOX, width=WIDTH, height=HEIGHT),
        prompt="Aiko's scarf, red",
    )


def picture(data: bytes) -> Image.Image:
    with Image.open(io.BytesIO(data)) as opened:
        opened.load()
        return opened.copy()


def touched_up(seed: int) -> tuple[TouchUpSpec, RenderResult]:
    """`touch()` redrawn by the renderer the settings name, which can touch up."""
    renderer = get_renderer()
    assert renderer.can_touch_up
    touched = touch()
    return touched, renderer.touch_up(touched, seed)


def assert_redrew_only_the_box(standin, result: RenderResult, touched: TouchUpSpec) -> None:
    """The one mask `standin` redrew with was the box's, at the providers' 1216×832, and
    its picture composited into the original kept all else."""
    [made] = standin.made.values()
    assert_redraws_the_box(made, (1216, 832))
    assert_keeps_the_outside(result, touched)


def assert_redraws_the_box(mask: Image.Image, size: tuple[int, int]) -> None:
    """`mask` (mode "L" as the provider reads it: 255 = redraw) marks the box and nothing
    else, at the provider's size (its edge may land a pixel either way when scaled)."""
    assert mask.size == size
    width, height = size
    x, y, w, h = BOX
    left, top, right, bottom = x * width, y * height, (x + w) * width, (y + h) * height
    inside = mask.crop((int(left) + 2, int(top) + 2, int(right) - 2, int(bottom) - 2))
    assert inside.getextrema() == (255, 255)
    outside = mask.copy()
    ImageDraw.Draw(outside).rectangle((left - 2, top - 2, right + 2, bottom + 2), fill=0)
    assert outside.getextrema() == (0, 0)


def assert_keeps_the_outside(result: RenderResult, touched: TouchUpSpec) -> None:
    """The provider's picture changed the whole picture a little (its stand-in drifts
    colours as a VAE does); composited into the original it keeps every pixel past the
    feather exactly, and the box is drawn anew."""
    before = picture(touched.image).convert("RGB")
    drawn = picture(result.image).convert("RGB").resize(before.size)
    composed = picture(regions.composite(touched.image, result.image, touched.mask))
    assert composed.size == before.size
    kept = regions.blend_mask(touched.mask, width=WIDTH, height=HEIGHT).point(
        lambda v: 255 if v == 0 else 0
    )
    assert kept.getbbox() is not None  # most of the picture lies outside the region

    def changed_outside(image: Image.Image) -> bool:
        difference = (
            ImageChops.difference(image, before).convert("L").point(lambda v: 255 * (v > 0))
        )
        return ImageChops.multiply(difference, kept).getbbox() is not None

    assert changed_outside(drawn)  # what came back is not the original outside the region
    assert not changed_outside(composed)  # the composite is, pixel for pixel
    centre = (WIDTH // 2, HEIGHT // 2)
    assert composed.getpixel(centre) != before.getpixel(centre)


# --- AUTOMATIC1111: img2img with init_images and a white-is-redrawn mask ------------------


@pytest.fixture
def a1111(settings):
    with A1111StandIn(render=0.1, load=0.1) as standin:
        provider_settings(settings, "a1111", standin)
        yield standin


def test_a1111_redraws_the_region_through_img2img_with_a_white_mask(a1111):
    touched, result = touched_up(41)
    assert not a1111.seen("POST", r"/sdapi/v1/txt2img")
    [call] = a1111.seen("POST", r"/sdapi/v1/img2img")
    payload = call.json()
    assert payload["seed"] == 41 and (payload["width"], payload["height"]) == (1216, 832)
    assert "Aiko's scarf, red" in payload["prompt"]
    assert payload["denoising_strength"] == 0.75 and payload["inpainting_fill"] == 1
    assert payload["inpaint_full_res"] is True and payload["inpainting_mask_invert"] == 0
    [init] = payload["init_images"]
    assert picture(base64.b64decode(init)).size == (1216, 832)
    sent = picture(base64.b64decode(payload["mask"]))
    assert sent.mode == "L"  # greyscale: white is redrawn
    assert_redraws_the_box(a1111.made[payload["force_task_id"]], (1216, 832))
    assert_keeps_the_outside(result, touched)


def test_a1111_sends_the_sheets_as_controlnet_units_with_a_touch_up(a1111):
    aiko = with_sheet(AIKO, 30)
    get_renderer().touch_up(touch(aiko, KENJI), 42)
    [call] = a1111.seen("POST", r"/sdapi/v1/img2img")
    [unit] = call.json()["alwayson_scripts"]["controlnet"]["args"]
    assert base64.b64decode(unit["image"]) == aiko.reference
    assert unit["module"] == "ip-adapter_clip_h"


def test_a1111_keeps_a_payload_of_ones_own_and_its_inpaint_settings(a1111, settings):
    settings.A1111_PAYLOAD = {
        "prompt": "{{prompt}}",
        "seed": "{{seed}}",
        "width": "{{width}}",
        "height": "{{height}}",
        "steps": 12,
        "sampler_name": "Euler a",
        "denoising_strength": 0.55,
    }
    get_renderer().touch_up(touch(), 43)
    [call] = a1111.seen("POST", r"/sdapi/v1/img2img")
    payload = call.json()
    assert payload["steps"] == 12 and payload["sampler_name"] == "Euler a"
    assert payload["denoising_strength"] == 0.55  # the person's own, not ours
    assert payload["mask"] and payload["init_images"]


def test_the_a1111_stand_in_refuses_an_img2img_without_its_picture_as_the_web_ui_does(a1111):
    answer = requests.post(f"{a1111.url}/sdapi/v1/img2img", json={"prompt": "x"}, timeout=5)
    assert answer.status_code == 404 and answer.json()["detail"] == "Init image not found"
    answer = requests.post(
        f"{a1111.url}/sdapi/v1/img2img",
        json={"prompt": "x", "init_images": ["not a picture"], "mask": "nor this"},
        timeout=5,
    )
    assert answer.status_code == 500 and answer.json()["detail"] == "Invalid encoded image"


# --- ComfyUI: the inpaint workflow, the picture and the mask uploaded ------------------------


@pytest.fixture
def comfy(settings):
    with ComfyUIStandIn(render=0.1, load=0.1) as standin:
        provider_settings(settings, "comfyui", standin, COMFYUI_INPAINT_WORKFLOW="")
        yield standin


def test_comfyui_runs_the_shipped_inpaint_workflow_on_the_uploaded_picture_and_mask(comfy):
    touched, result = touched_up(51)
    [queued] = comfy.seen("POST", r"/prompt")
    workflow = queued.json()["prompt"]
    assert {n["class_type"] for n in workflow.values()} == {
        n["class_type"] for n in shipped(INPAINT).values()
    }
    assert workflow["7"]["inputs"]["seed"] == 51
    assert "Aiko's scarf, red" in workflow["4"]["inputs"]["text"]
    image, mask = workflow["2"]["inputs"]["image"], workflow["3"]["inputs"]["image"]
    assert len(comfy.seen("POST", r"/upload/image")) == 2  # the picture and its mask
    assert picture(comfy.inputs[image]).size == (1216, 832)
    uploaded = picture(comfy.inputs[mask])
    assert uploaded.mode == "L"  # greyscale, white = redraw: LoadImageMask reads "red"
    assert workflow["3"]["inputs"]["channel"] == "red"
    assert_redrew_only_the_box(comfy, result, touched)


def test_comfyui_takes_an_inpaint_workflow_of_ones_own(comfy, settings, tmp_path):
    """A person's workflow: InpaintModelConditioning over the SDXL base, the mask read
    from the picture's alpha by ImageToMask would be wrong, so it reads LoadImageMask's
    red channel too; its placeholders become the uploaded files' names."""
    own = json.loads(json.dumps(shipped(INPAINT)))
    own["1"]["inputs"]["ckpt_name"] = "sd_xl_base_1.0.safetensors"
    own["6"] = {
        "class_type": "InpaintModelConditioning",
        "inputs": {
            "positive": ["4", 0],
            "negative": ["5", 0],
            "vae": ["1", 2],
            "pixels": ["2", 0],
            "mask": ["3", 0],
        },
    }
    own["7"]["inputs"].update(
        positive=["6", 0], negative=["6", 1], latent_image=["6", 2], denoise=0.85
    )
    path = tmp_path / "inpaint.json"
    path.write_text(json.dumps(own))
    settings.COMFYUI_INPAINT_WORKFLOW = str(path)
    touched = touch()
    result = get_renderer().touch_up(touched, 52)
    [queued] = comfy.seen("POST", r"/prompt")
    workflow = queued.json()["prompt"]
    assert workflow["6"]["class_type"] == "InpaintModelConditioning"
    assert workflow["7"]["inputs"]["denoise"] == 0.85
    assert_redrew_only_the_box(comfy, result, touched)


def test_an_inpaint_workflow_without_its_placeholders_is_refused_at_start(tmp_path):
    from mangagen.renderers import workflows

    path = tmp_path / "inpaint.json"
    path.write_text(
        json.dumps(
            {
                **shipped(INPAINT),
                "3": {**shipped(INPAINT)["3"], "inputs": {"image": "mask.png", "channel": "red"}},
            }
        )
    )
    with pytest.raises(ValueError, match=r"does not name \{\{mask\}\}"):
        workflows.load_inpaint(str(path))


def test_the_comfyui_stand_in_refuses_an_inpaint_workflow_whose_mask_is_not_uploaded(comfy):
    workflow = json.loads(json.dumps(shipped(INPAINT)))
    workflow["2"]["inputs"]["image"] = workflow["3"]["inputs"]["image"] = "missing.png"
    workflow["7"]["inputs"]["seed"] = 1
    for node in ("4", "5"):
        workflow[node]["inputs"]["text"] = "x"
    answer = requests.post(f"{comfy.url}/prompt", json={"prompt": workflow}, timeout=5)
    assert answer.status_code == 400
    assert set(answer.json()["node_errors"]) == {"2", "3"}


# --- RunPod worker-comfyui: the inpaint workflow, the picture and mask in input.images -------


@pytest.fixture
def runpod(settings):
    with RunPodStandIn(cold_boot=0.2, render=0.1, capacity=1) as standin:
        provider_settings(settings, "runpod", standin, COMFYUI_INPAINT_WORKFLOW="")
        yield standin


def test_runpod_sends_the_inpaint_workflow_with_the_picture_and_mask_as_named_images(runpod):
    touched, result = touched_up(61)
    [run] = runpod.seen("POST", r"/v2/abc123/run")
    given = run.json()["input"]
    names = [i["name"] for i in given["images"]]
    assert names == ["mangagen-touchup-image.png", "mangagen-touchup-mask.png"]
    workflow = given["workflow"]
    assert workflow["2"]["inputs"]["image"] == "mangagen-touchup-image.png"
    assert workflow["3"]["inputs"]["image"] == "mangagen-touchup-mask.png"
    assert workflow["7"]["inputs"]["seed"] == 61
    mask = given["images"][1]["image"]
    assert mask.startswith("data:image/png;base64,")
    assert picture(base64.b64decode(mask.partition(",")[2])).mode == "L"
    assert_redrew_only_the_box(runpod, result, touched)


def test_runpod_with_an_input_of_ones_own_redraws_only_where_it_names_image_and_mask(settings):
    settings.RUNPOD_API_KEY, settings.RUNPOD_ENDPOINT_ID = "rp_test", "abc123"
    settings.RENDERER = "runpod"
    settings.RUNPOD_INPUT = {"prompt": "{{prompt}}", "seed": "{{seed}}"}
    assert not get_renderer().can_touch_up
    settings.RUNPOD_INPUT = {"prompt": "{{prompt}}", "image": "{{image}}", "mask": "{{mask}}"}
    assert get_renderer().can_touch_up


# --- Replicate: FLUX Fill Pro, the picture and a white-is-redrawn mask as data URLs ----------


@pytest.fixture
def replicate(settings):
    with ReplicateStandIn(cold_boot=0.2, render=0.1) as standin:
        provider_settings(
            settings,
            "replicate",
            standin,
            REPLICATE_INPAINT_MODEL="black-forest-labs/flux-fill-pro",
            REPLICATE_INPAINT_INPUT=None,
        )
        yield standin


def test_replicate_redraws_the_region_on_flux_fill_with_image_and_mask_data_urls(replicate):
    touched, result = touched_up(71)
    assert not replicate.seen("POST", r"/v1/models/black-forest-labs/flux-schnell/predictions")
    [created] = replicate.seen("POST", r"/v1/models/black-forest-labs/flux-fill-pro/predictions")
    given = created.json()["input"]
    assert given["seed"] == 71 and "Aiko's scarf, red" in given["prompt"]
    assert given["image"].startswith("data:image/") and given["mask"].startswith("data:image/png")
    image = picture(base64.b64decode(given["image"].partition(",")[2]))
    mask = picture(base64.b64decode(given["mask"].partition(",")[2]))
    assert image.size == mask.size == (1216, 832) and mask.mode == "L"
    assert_redrew_only_the_box(replicate, result, touched)


def test_replicate_takes_an_inpainting_model_and_input_of_ones_own(replicate, settings):
    from tests.support.providers.replicate import FLUX_FILL_PRO, version_of

    replicate.models["someone/fill"] = FLUX_FILL_PRO
    replicate.versions[version_of("someone/fill")] = "someone/fill"
    replicate.made.clear()
    from tests.support.providers import replicate as module

    module.INPAINTING.add("someone/fill")
    try:
        settings.REPLICATE_INPAINT_MODEL = f"someone/fill:{version_of('someone/fill')}"
        settings.REPLICATE_INPAINT_INPUT = {
            "prompt": "{{prompt}}, clean lines",
            "image": "{{image}}",
            "mask": "{{mask}}",
            "steps": 20,
            "output_format": "png",
        }
        get_renderer().touch_up(touch(), 72)
    finally:
        module.INPAINTING.discard("someone/fill")
    [created] = replicate.seen("POST", r"/v1/predictions")
    body = created.json()
    assert body["version"] == version_of("someone/fill")
    assert body["input"]["steps"] == 20 and body["input"]["prompt"].endswith(", clean lines")


def test_the_replicate_stand_in_fails_a_mask_of_another_size_as_flux_fill_does(replicate):
    def url(size, mode):
        buffer = io.BytesIO()
        Image.new(mode, size, 0).save(buffer, format="PNG")
        return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()

    answer = requests.post(
        f"{replicate.url}/v1/models/black-forest-labs/flux-fill-pro/predictions",
        json={"input": {"prompt": "x", "image": url((64, 64), "RGB"), "mask": url((32, 32), "L")}},
        headers={"Authorization": "Bearer r8_test", "Prefer": "wait=5"},
        timeout=10,
    )
    assert answer.json()["status"] == "failed" and "does not match" in answer.json()["error"]
    answer = requests.post(
        f"{replicate.url}/v1/models/black-forest-labs/flux-fill-pro/predictions",
        json={"input": {"prompt": "x", "mask": url((32, 32), "L")}},
        headers={"Authorization": "Bearer r8_test"},
        timeout=10,
    )
    assert answer.status_code == 422  # `image` is required


# --- OpenAI: /images/edits, multipart, the mask transparent where it is redrawn --------------


def openai_settings(settings, standin, **extra) -> None:
    settings.RENDERER = "openai"
    settings.IMAGES_BASE_URL = standin.url
    settings.IMAGES_API_KEY = "sk-test"
    settings.IMAGES_MODEL = "gpt-image-1"
    settings.IMAGES_SERVER = "openai"
    settings.IMAGES_SIZE = "1536x1024"
    settings.IMAGES_REFERENCE_ENDPOINT = ""
    settings.IMAGES_MAX_REFERENCES = 4
    settings.RENDER_HTTP_RETRIES = 0
    for name, value in extra.items():
        setattr(settings, name, value)


@pytest.fixture
def openai(settings):
    with OpenAIStandIn() as standin:
        openai_settings(settings, standin)
        yield standin


def test_openai_redraws_the_region_through_edits_with_a_transparent_mask(openai):
    touched, result = touched_up(81)
    [made] = openai.made
    fields = made["fields"]
    assert fields["model"] == "gpt-image-1" and fields["size"] == "1536x1024"
    assert "Aiko's scarf, red" in fields["prompt"]
    assert "seed" not in fields and "response_format" not in fields  # edits refuse them
    [image] = made["images"]
    assert picture(image).size == (1536, 1024)
    [edit] = openai.seen("POST", r"/v1/images/edits")
    mask = picture(multipart_file(edit, "mask"))
    assert mask.mode == "RGBA" and mask.size == (1536, 1024)
    assert_redraws_the_box(mask.getchannel("A").point(lambda v: 255 if v == 0 else 0), mask.size)
    assert_redraws_the_box(made["mask"], (1536, 1024))
    assert_keeps_the_outside(result, touched)


def test_openai_sends_the_sheets_after_the_picture_when_it_takes_references(openai, settings):
    settings.IMAGES_REFERENCE_ENDPOINT = "/v1/images/edits"
    aiko = with_sheet(AIKO, 30)
    get_renderer().touch_up(touch(aiko, KENJI), 82)
    [made] = openai.made
    assert len(made["images"]) == 2 and made["images"][1] == aiko.reference
    assert picture(made["images"][0]).size == (1536, 1024)  # the mask's picture comes first


def test_dall_e_gets_its_response_format_and_other_servers_cannot_touch_up(openai, settings):
    settings.IMAGES_MODEL = "dall-e-2"
    settings.IMAGES_SIZE = "1024x1024"
    get_renderer().touch_up(touch(), 83)
    assert openai.made[0]["fields"]["response_format"] == "b64_json"
    settings.IMAGES_SERVER = "localai"
    assert not get_renderer().can_touch_up
    with pytest.raises(RenderError, match="cannot redraw a region"):
        get_renderer().touch_up(touch(), 84)


def test_the_openai_stand_in_refuses_what_openai_refuses(openai):
    def edit(fields, files):
        return requests.post(
            f"{openai.url}/v1/images/edits",
            data=fields,
            files=files,
            headers={"Authorization": "Bearer sk-test"},
            timeout=5,
        )

    rgb, small = io.BytesIO(), io.BytesIO()
    Image.new("RGB", (64, 64)).save(rgb, format="PNG")
    Image.new("RGBA", (32, 32)).save(small, format="PNG")
    picture_file = ("image", ("a.png", rgb.getvalue(), "image/png"))
    answer = edit({"prompt": "x", "seed": "3"}, [picture_file])
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "unknown_parameter"
    answer = edit(
        {"prompt": "x", "model": "gpt-image-1", "response_format": "b64_json"}, [picture_file]
    )
    assert answer.status_code == 400
    answer = edit({"prompt": "x"}, [picture_file, ("mask", ("m.png", rgb.getvalue(), "image/png"))])
    assert "missing alpha channel" in answer.json()["error"]["message"]
    answer = edit(
        {"prompt": "x"}, [picture_file, ("mask", ("m.png", small.getvalue(), "image/png"))]
    )
    assert "does not match" in answer.json()["error"]["message"]
    answer = edit({"prompt": "x"}, [picture_file])
    assert answer.status_code == 200 and answer.json()["data"][0]["b64_json"]


def multipart_file(request, name: str) -> bytes:
    from tests.support.providers.base import multipart

    _, files = multipart(request)
    return files[name][0][1]
