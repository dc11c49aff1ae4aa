"""The `openai` renderer's two traps, against stand-ins written from the servers'
sources (tests/support/providers/openai_compatible.py): LocalAI has no edits route
and takes `ref_images` as raw base64 on generations; stable-diffusion.cpp's edits
make the first picture the init image, so references go in its extra args."""

from __future__ import annotations

import pytest

from mangagen.renderers import get_renderer
from tests.support.providers.openai_compatible import LocalAIStandIn, SdCppStandIn
from tests.support.remote_renders import AIKO, KENJI, spec, with_sheet


def configure(settings, standin, server: str, endpoint: str = "") -> None:
    settings.RENDERER = "openai"
    settings.IMAGES_BASE_URL = standin.url
    settings.IMAGES_SERVER = server
    settings.IMAGES_REFERENCE_ENDPOINT = endpoint
    settings.IMAGES_MAX_REFERENCES = 4
    settings.IMAGES_SIZE = "1024x768"
    settings.RENDER_HTTP_RETRIES = 0


@pytest.mark.parametrize("endpoint", ["", "/v1/images/edits"])
def test_localai_gets_the_sheets_as_raw_base64_ref_images_on_generations(settings, endpoint):
    aiko, kenji = with_sheet(AIKO, 30), with_sheet(KENJI, 220)
    with LocalAIStandIn() as localai:
        configure(settings, localai, "localai", endpoint)
        result = get_renderer().render(spec(aiko, kenji), 3)
    [made] = localai.made
    assert made["ref_images"] == [aiko.reference, kenji.reference]
    assert "image 1 is Aiko, image 2 is Kenji" in made["prompt"]
    assert not localai.seen("POST", r"/v1/images/edits")  # LocalAI has none
    assert result.metadata["references"] == ["Aiko", "Kenji"]


def test_sd_cpp_never_gets_a_sheet_as_its_init_image(settings):
    aiko = with_sheet(AIKO, 30)
    with SdCppStandIn() as sdcpp:
        # Even pointed at the edits endpoint, references ride on generations.
        configure(settings, sdcpp, "sdcpp", "/v1/images/edits")
        get_renderer().render(spec(aiko, KENJI), 5)
    [made] = sdcpp.made
    assert made["init_image"] is None
    assert made["ref_images"] == [aiko.reference]
    assert made["seed"] == 5  # sd.cpp reads the seed from its extra args only
    assert "<sd_cpp_extra_args>" not in made["prompt"] and "image 1 is Aiko" in made["prompt"]
    assert not sdcpp.seen("POST", r"/v1/images/edits")


def test_openai_s_edits_make_a_sheet_the_init_image_on_sd_cpp(settings):
    """Why IMAGES_SERVER=sdcpp exists: the same panel through the edits endpoint."""
    aiko = with_sheet(AIKO, 30)
    with SdCppStandIn() as sdcpp:
        configure(settings, sdcpp, "openai", "/v1/images/edits")
        get_renderer().render(spec(aiko, KENJI), 5)
    [made] = sdcpp.made
    assert made["init_image"] == aiko.reference


def test_sd_cpp_without_references_still_gets_its_seed(settings):
    with SdCppStandIn() as sdcpp:
        configure(settings, sdcpp, "sdcpp")
        get_renderer().render(spec(), 9)
    assert sdcpp.made[0]["seed"] == 9 and sdcpp.made[0]["ref_images"] == []
