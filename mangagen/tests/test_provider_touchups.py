"""Touch-ups through every remote renderer, over real HTTP to the providers' stand-ins
(tests/support/providers/): each redraws a region in its own request shape (AUTOMATIC1111
img2img, ComfyUI and worker-comfyui inpaint workflows, Replicate's FLUX Fill, OpenAI's
/images/edits) with the mask in its own polarity, as the provider reads it; and the
provider's picture composited back into the original keeps every pixel outside the
region and its feather, whatever the provider did there."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image, ImageChops, ImageDraw

from mangagen.renderers import RenderResult, get_renderer, regions
from mangagen.renderers.base import TouchUpSpec
from mangagen.tests.remote_renders import AIKO, KENJI, quick, spec, with_sheet
from tests.support.providers.a1111 import A1111StandIn

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
        quick(
            settings,
            "a1111",
            A1111_BASE_URL=standin.url,
            A1111_AUTH="",
            A1111_PAYLOAD=None,
            A1111_REFERENCE_MODULE="ip-adapter_clip_h",
            A1111_REFERENCE_MODEL="ip-adapter-plus_sdxl_vit-h",
        )
        yield standin


def test_a1111_redraws_the_region_through_img2img_with_a_white_mask(a1111):
    renderer = get_renderer()
    assert renderer.can_touch_up
    touched = touch()
    result = renderer.touch_up(touched, 41)
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
    import requests

    answer = requests.post(f"{a1111.url}/sdapi/v1/img2img", json={"prompt": "x"}, timeout=5)
    assert answer.status_code == 404 and answer.json()["detail"] == "Init image not found"
    answer = requests.post(
        f"{a1111.url}/sdapi/v1/img2img",
        json={"prompt": "x", "init_images": ["not a picture"], "mask": "nor this"},
        timeout=5,
    )
    assert answer.status_code == 500 and answer.json()["detail"] == "Invalid encoded image"
