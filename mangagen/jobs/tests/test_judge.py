"""The judge's provider over real HTTP, against OpenAI's chat completions as a vision
model takes them (tests/support/providers/openai_compatible.py `ChatStandIn`): the
request's shape (the render, each sheet and the place as `data:` URL image parts,
downscaled, with the description), strict reading of the answer, and no verdict,
never an error, for a judge that fails, dawdles or answers nonsense."""

from __future__ import annotations

import base64
import io
import json
import time

import pytest
from PIL import Image

from mangagen.jobs.judge import ChatJudge, Verdict, data_url, get_judge, parse
from mangagen.renderers import CharacterSpec, PanelSpec, PlaceSpec
from tests.support.factories import png
from tests.support.providers.openai_compatible import ChatStandIn

RENDER = png((1024, 768), (200, 30, 30))
AIKO_SHEET = png((800, 800), (10, 10, 200))
STATION = png((640, 480), (30, 160, 30))
SPEC = PanelSpec(
    style="shonen",
    description="Aiko waits at the station in her red scarf.",
    shot="medium",
    characters=(
        CharacterSpec("Aiko", "red scarf", sheet="a" * 64, reference=AIKO_SHEET),
        CharacterSpec("Ren", "a hat"),  # no sheet: nothing to send
    ),
    place=PlaceSpec("Station", "a small rural station", reference=STATION),
)


@pytest.fixture
def chat():
    with ChatStandIn() as standin:
        yield standin


def judge_of(chat: ChatStandIn, *, timeout: float = 10, key: str | None = None) -> ChatJudge:
    return ChatJudge(
        base_url=f"{chat.url}/v1",
        api_key=chat.key if key is None else key,
        model="gpt-4o-mini",
        timeout=timeout,
        side=256,
    )


def size_of(picture: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(picture)) as image:
        return image.size


def colour_of(picture: bytes) -> tuple[int, ...]:
    with Image.open(io.BytesIO(picture)) as image:
        return image.convert("RGB").getpixel((image.width // 2, image.height // 2))


def test_the_render_each_sheet_and_the_place_go_as_data_url_image_parts_downscaled(chat):
    chat.scores = [0.75]
    chat.characters = {"Aiko": 0.7}
    verdict = judge_of(chat).judge(picture=RENDER, spec=SPEC)
    assert verdict == Verdict(score=0.75, characters={"Aiko": 0.7}, reason="scored 0.75")
    [request] = chat.seen("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == f"Bearer {chat.key}"
    body = request.json()
    assert body["model"] == "gpt-4o-mini"
    assert body["response_format"] == {"type": "json_object"}
    [system, user] = body["messages"]
    assert system["role"] == "system" and isinstance(system["content"], str)
    kinds = [part["type"] for part in user["content"]]
    assert kinds.count("image_url") == 3  # the render, Aiko's sheet, the station; Ren has none
    urls = [p["image_url"]["url"] for p in user["content"] if p["type"] == "image_url"]
    assert all(url.startswith("data:image/png;base64,") for url in urls)
    [made] = chat.made
    assert SPEC.description in " ".join(made["texts"])
    assert "Aiko" in " ".join(made["texts"])
    # In order, each the picture it names (by its colour), none over the side asked for.
    assert [colour_of(p) for p in made["images"]] == [
        colour_of(RENDER),
        colour_of(AIKO_SHEET),
        colour_of(STATION),
    ]
    assert [size_of(p) for p in made["images"]] == [(256, 192), (256, 256), (256, 192)]


def test_the_settings_choose_the_judge(settings):
    settings.JUDGE = "none"
    assert get_judge() is None
    settings.JUDGE, settings.JUDGE_BASE_URL = "openai", "http://judge.invalid/v1/"
    settings.JUDGE_TIMEOUT_SECONDS, settings.JUDGE_IMAGE_SIDE = 7.0, 384
    judge = get_judge()
    assert isinstance(judge, ChatJudge)
    assert judge.url == "http://judge.invalid/v1/chat/completions"
    assert (judge.timeout, judge.side) == (7.0, 384)


NONSENSE = [
    "The panel looks fine to me.",  # not JSON
    "[0.9]",  # not an object
    json.dumps({"score": 0.9, "reason": "ok"}),  # a key missing
    json.dumps({"score": 0.9, "characters": {}, "reason": "ok", "verdict": "pass"}),  # one more
    json.dumps({"score": 9, "characters": {}, "reason": "out of ten"}),
    json.dumps({"score": "0.9", "characters": {}, "reason": "a string"}),
    json.dumps({"score": True, "characters": {}, "reason": "a boolean"}),
    json.dumps({"score": 0.9, "characters": {"Kenji": 0.9}, "reason": "not present"}),
    json.dumps({"score": 0.9, "characters": {"Aiko": -1}, "reason": "negative"}),
    json.dumps({"score": 0.9, "characters": [], "reason": "a list"}),
    json.dumps({"score": 0.9, "characters": {}, "reason": None}),
    '{"score": NaN, "characters": {}, "reason": "nan"}',
]


@pytest.mark.parametrize("content", NONSENSE)
def test_an_answer_of_any_other_shape_is_no_verdict(chat, content):
    chat.contents = [content]
    assert judge_of(chat).judge(picture=RENDER, spec=SPEC) is None
    assert len(chat.made) == 1  # it was asked, and answered


def test_an_http_error_or_a_refused_key_is_no_verdict(chat):
    chat.fail_next(500, {"error": {"message": "The server had an error"}})
    assert judge_of(chat).judge(picture=RENDER, spec=SPEC) is None
    assert judge_of(chat, key="sk-wrong").judge(picture=RENDER, spec=SPEC) is None
    assert judge_of(chat).judge(picture=RENDER, spec=SPEC) is not None  # and then it answers


def test_a_judge_that_is_not_there_is_no_verdict():
    judge = ChatJudge(base_url="http://127.0.0.1:9/v1", api_key="", model="m", timeout=5)
    assert judge.judge(picture=RENDER, spec=SPEC) is None


def test_a_slow_judge_is_no_verdict_at_its_timeout_not_at_its_answer(chat):
    chat.delay = 10
    started = time.monotonic()
    assert judge_of(chat, timeout=0.5).judge(picture=RENDER, spec=SPEC) is None
    assert time.monotonic() - started < 5  # its answer would take 10 s


def test_a_render_that_is_no_picture_is_not_sent(chat):
    """Against a judge that answers (the stand-in): no verdict, because nothing was
    asked, not because nothing listened."""
    assert judge_of(chat).judge(picture=b"not a picture", spec=SPEC) is None
    assert chat.made == []
    assert judge_of(chat).judge(picture=RENDER, spec=SPEC) is not None  # a picture is sent
    assert len(chat.made) == 1


def test_the_stand_in_refuses_what_openai_refuses(chat):
    """The stand-in is the API's rules, not a mirror of our request: an http-less URL,
    a picture that is not its type, or JSON mode without the word JSON are refused."""
    import requests

    def ask(parts, system="Answer in JSON."):
        return requests.post(
            f"{chat.url}/v1/chat/completions",
            headers={"Authorization": f"Bearer {chat.key}"},
            json={
                "model": "m",
                "response_format": {"type": "json_object"},
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": parts},
                ],
            },
            timeout=10,
        )

    good = {"type": "image_url", "image_url": {"url": data_url(RENDER, 64)}}
    assert ask([good]).status_code == 200
    raw = base64.b64encode(RENDER).decode()
    assert ask([{"type": "image_url", "image_url": {"url": raw}}]).status_code == 400
    jpeg_said = {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{raw}"}}
    assert ask([jpeg_said]).status_code == 400
    assert ask([{"type": "image", "image": raw}]).status_code == 400
    assert ask([good], system="Answer briefly.").status_code == 400


def test_parse_reads_a_verdict_strictly():
    answer = {"score": 1, "characters": {"Aiko": 0}, "reason": " fine "}
    assert parse(answer, present=["Aiko"]) == Verdict(1.0, {"Aiko": 0.0}, "fine")
    with pytest.raises(ValueError):
        parse(answer, present=[])
