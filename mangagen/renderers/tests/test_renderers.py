"""Renderers: the procedural one (and its shared cold start), the OpenAI-compatible one."""

import base64
import io
import multiprocessing
import uuid
from types import SimpleNamespace

import pytest
from PIL import Image

from mangagen.renderers import CharacterSpec, DialogueSpec, PanelSpec, RenderError, get_renderer
from mangagen.renderers.gpu_pool import GpuPool
from mangagen.renderers.prompts import image_prompt
from mangagen.renderers.providers.openai import OpenAIImagesRenderer
from mangagen.renderers.providers.procedural import Look, ProceduralRenderer
from tests.support.standin import Canned
from tests.support.waiting import wait_for

AIKO = CharacterSpec("Aiko", "long black hair, red scarf")
KENJI = CharacterSpec("Kenji", "spiky hair, glasses")


def spec(**extra) -> PanelSpec:
    base = {
        "style": "manga",
        "description": "Aiko and Kenji on a rooftop in the rain.",
        "shot": "medium",
        "characters": (AIKO, KENJI),
        "dialogue": (
            DialogueSpec("Aiko", "They're right behind us!"),
            DialogueSpec("Kenji", "Then we jump."),
        ),
        "caption": "Neo-Kyoto, 2 a.m.",
    }
    return PanelSpec(**(base | extra))


@pytest.fixture
def pool(settings):
    return GpuPool(prefix=f"test:gpu:{uuid.uuid4()}")


@pytest.fixture
def instant(pool):
    return ProceduralRenderer(
        width=480, height=340, pool=pool, cold_start_seconds=0, render_seconds=0
    )


def decode(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png))


def test_same_inputs_and_seed_give_the_same_image(instant):
    assert instant.draw(spec(), 7) == instant.draw(spec(), 7)


def test_the_seed_changes_the_image_and_the_text_never_does(instant):
    assert instant.draw(spec(shot="action"), 7) != instant.draw(spec(shot="action"), 8)
    other_words = spec(dialogue=(DialogueSpec("Aiko", "Wait for me!"),), caption="Later.")
    assert instant.draw(spec(), 7) == instant.draw(other_words, 7), "art only: no lettering"
    assert instant.draw(spec(), 7) == instant.draw(spec(dialogue=(), caption=""), 7)


def test_a_spec_from_a_panel_reads_a_line_without_a_speaker_as_narration():
    panel = SimpleNamespace(
        description="A rooftop.",
        shot="wide",
        characters=["Aiko"],
        dialogue=[{"text": "Meanwhile…"}, {"speaker": "Aiko", "text": "Run!"}],
        caption="",
        index=1,
        content_hash="c",
        art_hash="a",
    )
    made = PanelSpec.from_panel(panel, style="manga", cast={"Aiko": "red scarf"})
    assert made.dialogue == (DialogueSpec("", "Meanwhile…"), DialogueSpec("Aiko", "Run!"))
    assert made.characters == (CharacterSpec("Aiko", "red scarf"),)


def test_it_reports_where_it_drew_each_face(instant):
    _, faces = instant.draw_with_faces(spec(), 7)
    assert set(faces) == {"Aiko", "Kenji"}
    (ax, ay, ar), (kx, _, _) = faces["Aiko"], faces["Kenji"]
    assert 0 < ax < kx < 1 and 0 < ay < 1 and 0 < ar < 0.5
    result = instant.render(spec(), 7)
    assert result.metadata["faces"] == faces


@pytest.mark.parametrize(
    "shot", ["establishing", "wide", "medium", "close-up", "extreme-close-up", "action"]
)
@pytest.mark.parametrize("style", ["manga", "noir", "shoujo", "chibi"])
def test_every_shot_and_style_draws_art_edge_to_edge(instant, shot, style):
    image = decode(instant.draw(spec(shot=shot, style=style), 1))
    assert image.format == "PNG" and image.size == (480, 340)
    pixels = image.convert("L")
    low, high = pixels.getextrema()
    assert low < 60 and high > 200, "ink and paper both"
    # No frame baked in (no white gutter, no ink border): the page draws those.
    ring = [pixels.getpixel((x, y)) for x in range(480) for y in (0, 339)]
    ring += [pixels.getpixel((x, y)) for y in range(340) for x in (0, 479)]
    assert min(ring) < 255, "the art reaches the edge"
    assert max(ring) > 60, "no ink border all round"


def test_a_character_looks_the_same_in_every_panel_and_unlike_others():
    assert Look.of(AIKO) == Look.of(CharacterSpec("Aiko", "long black hair, red scarf"))
    assert Look.of(AIKO).hair == "long" and Look.of(AIKO).hair_tone == 0 and Look.of(AIKO).scarf
    assert Look.of(KENJI).glasses and Look.of(KENJI).hair == "spiky"
    assert Look.of(AIKO) != Look.of(KENJI)


def test_cold_start_then_warm_then_cold_after_idling():
    # A margin wide enough for a loaded machine: the second render starts well
    # inside the idle time.
    idle = 1.5
    pool = GpuPool(prefix=f"test:gpu:{uuid.uuid4()}", idle_seconds=idle)
    renderer = ProceduralRenderer(
        width=160,
        height=120,
        pool=pool,
        cold_start_seconds=1.0,
        idle_seconds=idle,
        render_seconds=0.05,
    )
    first = renderer.render(spec(), 1)
    assert first.cold is True and first.seconds >= 1.0
    second = renderer.render(spec(), 1)
    assert second.cold is False and second.seconds < 1.0  # no cold start paid
    wait_for(lambda: pool.state().warm == 0, what="the container to go cold")
    third = renderer.render(spec(), 1)
    assert third.cold is True and third.seconds >= 1.0
    assert first.image == second.image == third.image


def _render_in_another_process(prefix: str, redis_url: str) -> bool:
    import django

    django.setup()
    pool = GpuPool(url=redis_url, prefix=prefix)
    renderer = ProceduralRenderer(
        width=160, height=120, pool=pool, cold_start_seconds=0.3, idle_seconds=30, render_seconds=0
    )
    return renderer.render(spec(), 1).cold


def test_warmth_is_shared_across_processes(settings):
    prefix = f"test:gpu:{uuid.uuid4()}"
    with multiprocessing.get_context("spawn").Pool(1) as workers:
        assert workers.apply(_render_in_another_process, (prefix, settings.REDIS_URL)) is True
    here = ProceduralRenderer(
        width=160,
        height=120,
        pool=GpuPool(prefix=prefix),
        cold_start_seconds=0.3,
        idle_seconds=30,
        render_seconds=0,
    )
    assert here.render(spec(), 1).cold is False


def test_renderer_is_chosen_by_settings(settings):
    assert get_renderer("procedural").name == "procedural"
    assert get_renderer("openai").name == "openai"
    with pytest.raises(ValueError):
        get_renderer("crayons")


# --- prompts --------------------------------------------------------------------------


def test_the_prompt_carries_style_shot_panel_and_characters():
    prompt = image_prompt(spec(style="noir", shot="close-up"))
    for words in (
        "noir",
        "close-up",
        "rooftop in the rain",
        "Aiko: long black hair, red scarf",
        "Kenji",
    ):
        assert words in prompt
    assert "They're right behind us" not in prompt  # lettering is drawn, not generated


# --- the OpenAI-compatible renderer ---------------------------------------------------------


def png_bytes(size=(64, 48)) -> bytes:
    buffer = io.BytesIO()
    Image.new("L", size, 200).save(buffer, format="PNG")
    return buffer.getvalue()


def openai(standin, **extra) -> OpenAIImagesRenderer:
    options = {
        "base_url": standin.url,
        "api_key": "sk-test",
        "model": "sd-turbo",
        "size": "512x512",
    }
    return OpenAIImagesRenderer(**options | {"timeout": 1, "retries": 2, "backoff": 0.01} | extra)


def test_b64_json_answer(standin):
    standin.reply(Canned(body={"data": [{"b64_json": base64.b64encode(png_bytes()).decode()}]}))
    result = openai(standin).render(spec(), 5)
    assert (result.width, result.height, result.content_type) == (64, 48, "image/png")
    sent = standin.requests[0]
    assert sent["path"] == "/v1/images/generations"
    assert sent["headers"]["Authorization"] == "Bearer sk-test"
    assert sent["json"]["model"] == "sd-turbo" and sent["json"]["size"] == "512x512"
    assert sent["json"]["prompt"] == image_prompt(spec())


def test_url_answer_is_downloaded(standin):
    standin.reply(
        Canned(body={"data": [{"url": f"{standin.url}/files/1.png"}]}),
        Canned(raw=png_bytes((30, 20)), content_type="image/png"),
    )
    result = openai(standin).render(spec(), 5)
    assert (result.width, result.height) == (30, 20)
    assert standin.requests[1]["path"] == "/files/1.png"


def test_5xx_and_timeouts_are_retried_with_backoff(standin):
    standin.reply(
        Canned(status=503, body={"error": "warming up"}),
        Canned(delay=1.5, body={}),  # longer than the timeout
        Canned(body={"data": [{"b64_json": base64.b64encode(png_bytes()).decode()}]}),
    )
    assert openai(standin).render(spec(), 5).width == 64
    assert len(standin.requests) == 3


def test_persistent_5xx_gives_up_with_a_retryable_error(standin):
    standin.reply(*[Canned(status=502, body={})] * 3)
    with pytest.raises(RenderError, match="failed 3 times") as exc:
        openai(standin).render(spec(), 5)
    assert exc.value.retryable is True


def test_4xx_fails_at_once_with_the_providers_message(standin):
    standin.reply(
        Canned(status=400, body={"error": {"message": "prompt rejected by safety system"}})
    )
    with pytest.raises(RenderError, match="prompt rejected by safety system") as exc:
        openai(standin).render(spec(), 5)
    assert exc.value.retryable is False
    assert len(standin.requests) == 1


def test_an_answer_without_an_image_is_an_error(standin):
    standin.reply(Canned(body={"data": [{"b64_json": base64.b64encode(b"not a png").decode()}]}))
    with pytest.raises(RenderError, match="not a whole PNG, JPEG or WebP image"):
        openai(standin).render(spec(), 5)


@pytest.mark.parametrize(
    "body",
    [
        # the first bytes of a PNG: a header that opens, a picture that is not there
        {"data": [{"b64_json": base64.b64encode(png_bytes()[:60]).decode()}]},
        {"data": [{"b64_json": "not base64 at all!"}]},
        {"data": [{"b64_json": "abc"}]},  # bad padding
        {"data": "abc"},
        {"data": [None]},
        {"data": ["an image"]},
    ],
)
def test_an_odd_answer_is_a_failed_render_to_retry_never_a_paid_one(standin, body):
    """Never delivered (and so never charged), and retried like any failed answer."""
    standin.reply(Canned(body=body))
    with pytest.raises(RenderError) as exc:
        openai(standin).render(spec(), 5)
    assert exc.value.retryable is True
