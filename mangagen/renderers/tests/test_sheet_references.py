"""Reference images: a panel's sheets go to an edits endpoint that takes them, in order."""

import base64
import io
from email.parser import BytesParser
from email.policy import HTTP

import pytest
from PIL import Image

from mangagen.renderers import CharacterSpec, PanelSpec, SheetSpec, get_renderer
from mangagen.renderers.prompts import image_prompt, sheet_prompt
from mangagen.renderers.providers.openai import OpenAIImagesRenderer
from tests.support.standin import Canned


def png(shade: int, size=(64, 64)) -> bytes:
    buffer = io.BytesIO()
    Image.new("L", size, shade).save(buffer, format="PNG")
    return buffer.getvalue()


AIKO = CharacterSpec("Aiko", "long black hair", sheet="a" * 64, reference=png(10))
KENJI = CharacterSpec("Kenji", "glasses", sheet="b" * 64, reference=png(200))
REN = CharacterSpec("Ren", "a hat")  # no sheet


def spec(*characters) -> PanelSpec:
    return PanelSpec(
        style="manga", description="On the rooftop.", shot="wide", characters=characters
    )


def answer() -> Canned:
    return Canned(body={"data": [{"b64_json": base64.b64encode(png(128, (32, 32))).decode()}]})


def renderer(standin, **extra) -> OpenAIImagesRenderer:
    options = {
        "base_url": standin.url,
        "api_key": "sk-test",
        "model": "flux-kontext",
        "size": "512x512",
        "timeout": 2,
        "retries": 1,
        "backoff": 0.01,
        "reference_endpoint": "/v1/images/edits",
        "max_references": 4,
    }
    return OpenAIImagesRenderer(**options | extra)


def multipart(request: dict) -> list[tuple[str, str | None, bytes]]:
    """The parts of a recorded multipart body: (field name, file name, bytes), in order."""
    head = f"Content-Type: {request['headers']['Content-Type']}\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + request["json"])
    assert message.is_multipart()
    return [
        (
            part.get_param("name", header="content-disposition"),
            part.get_filename(),
            part.get_payload(decode=True),
        )
        for part in message.iter_parts()
    ]


def test_the_edits_request_carries_each_sheet_in_order_with_the_prompt(standin):
    standin.reply(answer())
    result = renderer(standin).render(spec(KENJI, REN, AIKO), 9)
    sent = standin.requests[0]
    assert sent["method"] == "POST" and sent["path"] == "/v1/images/edits"
    assert sent["headers"]["Authorization"] == "Bearer sk-test"
    assert sent["headers"]["Content-Type"].startswith("multipart/form-data; boundary=")
    parts = multipart(sent)
    fields = {name: data.decode() for name, filename, data in parts if filename is None}
    images = [(name, data) for name, filename, data in parts if filename is not None]
    assert images == [("image[]", KENJI.reference), ("image[]", AIKO.reference)]
    assert fields["model"] == "flux-kontext" and fields["size"] == "512x512"
    assert fields["seed"] == "9" and fields["n"] == "1"
    assert fields["prompt"] == image_prompt(spec(KENJI, REN, AIKO), references=("Kenji", "Aiko"))
    assert "image 1 is Kenji, image 2 is Aiko" in fields["prompt"]
    assert "Ren: a hat" in fields["prompt"]  # the one without a sheet keeps the description
    assert result.metadata["references"] == ["Kenji", "Aiko"]


def test_no_more_references_than_the_backend_takes(standin):
    standin.reply(answer())
    renderer(standin, max_references=1).render(spec(AIKO, KENJI), 1)
    images = [p for p in multipart(standin.requests[0]) if p[1] is not None]
    assert [data for _, _, data in images] == [AIKO.reference]


@pytest.mark.parametrize("extra", [{"reference_endpoint": ""}, {"max_references": 0}])
def test_a_backend_that_takes_none_gets_the_description_only_prompt(standin, extra):
    standin.reply(answer())
    renderer(standin, **extra).render(spec(AIKO, KENJI), 3)
    sent = standin.requests[0]
    assert sent["path"] == "/v1/images/generations"
    assert sent["json"]["prompt"] == image_prompt(spec(AIKO, KENJI))
    assert "reference" not in sent["json"]["prompt"]


def test_a_panel_without_sheets_goes_to_generations(standin):
    standin.reply(answer())
    renderer(standin).render(spec(REN), 3)
    assert standin.requests[0]["path"] == "/v1/images/generations"


def test_edits_are_retried_like_generations(standin):
    standin.reply(Canned(status=503, body={"error": "busy"}), answer())
    renderer(standin).render(spec(AIKO), 3)
    assert [r["path"] for r in standin.requests] == ["/v1/images/edits"] * 2
    assert [p[2] for p in multipart(standin.requests[1]) if p[1]] == [AIKO.reference]


def test_a_sheet_is_rendered_from_generations_with_the_sheet_prompt(standin):
    standin.reply(answer())
    sheet = SheetSpec(style="noir", character=CharacterSpec("Aiko", "long black hair"))
    result = renderer(standin).render_sheet(sheet, 4)
    sent = standin.requests[0]
    assert sent["path"] == "/v1/images/generations"
    assert sent["json"]["prompt"] == sheet_prompt(sheet)
    assert "reference sheet of Aiko: long black hair" in sent["json"]["prompt"]
    assert result.width == 32


def test_the_settings_choose_the_endpoint_and_the_count(settings, standin):
    settings.RENDERER = "openai"
    settings.IMAGES_BASE_URL = standin.url
    settings.IMAGES_REFERENCE_ENDPOINT = "/v1/images/edits"
    settings.IMAGES_MAX_REFERENCES = 2
    chosen = get_renderer()
    assert chosen.http.url(chosen.edits_path) == f"{standin.url}/v1/images/edits"
    assert chosen.taken() == 2
    settings.IMAGES_REFERENCE_ENDPOINT = ""
    assert get_renderer().taken() == 0
