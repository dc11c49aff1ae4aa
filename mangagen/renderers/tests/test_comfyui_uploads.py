"""Sheets uploaded to ComfyUI stay there (its API cannot delete a file from its input
folder: the provider's retention, docs/bounds.md); COMFYUI_UPLOAD_REFERENCES=off sends
none. Over real HTTP to the stand-in (tests/support/providers/comfyui.py)."""

from __future__ import annotations

import pytest

from mangagen.renderers import get_renderer
from mangagen.renderers.workflows import REFERENCES, TXT2IMG, shipped
from tests.support.providers.comfyui import ComfyUIStandIn
from tests.support.remote_renders import AIKO, KENJI, provider_settings, spec, with_sheet


@pytest.fixture
def comfy(settings):
    with ComfyUIStandIn(render=0.2, load=0.3) as standin:
        provider_settings(settings, "comfyui", standin)
        yield standin


def test_with_uploads_off_no_sheet_leaves_for_the_comfyui_server(comfy, settings):
    settings.COMFYUI_UPLOAD_REFERENCES = False
    result = get_renderer().render(spec(with_sheet(AIKO, 30), with_sheet(KENJI, 220)), 22)
    assert result.image.startswith(b"\x89PNG")
    assert comfy.seen("POST", r"/upload/image") == [] and comfy.inputs == {}
    workflow = comfy.seen("POST", r"/prompt")[0].json()["prompt"]
    assert set(workflow) == set(shipped(TXT2IMG)), "drawn from the descriptions alone"


def test_with_uploads_on_the_sheets_are_sent(comfy, settings):
    assert settings.COMFYUI_UPLOAD_REFERENCES  # the default
    get_renderer().render(spec(with_sheet(AIKO, 30)), 22)
    assert len(comfy.seen("POST", r"/upload/image")) == 1
    assert set(comfy.seen("POST", r"/prompt")[0].json()["prompt"]) == set(shipped(REFERENCES))
