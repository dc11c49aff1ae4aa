"""Lettering you direct, on the real stack (daphne, both Celery workers: tests/support/stack.py).

A person renders a one-panel comic, then letters it: a balloon's style and place
and its tail, a sound effect. The API keeps them, they change the panel's
`content_hash` and never its `art_hash`, Generate's quote stays 0, the composed
page changes where the balloon was and where it went, every export follows,
a translation keeps the original's balloons, and what is out of bounds is
refused whole.
"""

from __future__ import annotations

import io
import zipfile

import pytest
from PIL import Image, ImageChops

from tests.support.comicinfo import schema as comicinfo_schema
from tests.support.people import Visitor
from tests.support.stack import ROOT, Stack, stack
from tests.support.waiting import wait_for

ARTIFACTS = ROOT / "artifacts"
CAST = [{"name": "Aiko", "description": "red scarf"}]
LINE = {"speaker": "Aiko", "text": "Over here, quickly!"}


@pytest.fixture(scope="module", name="stack")
def lettering_stack():
    env = {"RENDER_COLD_START_SECONDS": "0.2", "RENDER_SECONDS": "0.2"}
    with stack(
        "lettering-stack", log=ARTIFACTS / "lettering-stack.log", SPECULATION_ENABLED="false", **env
    ) as running:
        yield running


def panel(**lettering) -> dict:
    return {
        "description": "Aiko on a rooftop at dusk.",
        "shot": "medium",
        "characters": ["Aiko"],
        "dialogue": [LINE],
        **lettering,
    }


def rendered_comic(stack: Stack) -> tuple[Visitor, int]:
    """A person with credits and a one-panel comic whose picture is rendered and kept."""
    person = Visitor(stack.base_url)
    assert person.post("/credits/demo/", allow_redirects=False).status_code == 302
    made = person.post("/api/storyboards/", {"title": "Rooftop", "story": "Aiko waits."})
    assert made.status_code == 201, made.text
    board = made.json()["id"]
    saved = patch(person, board, [panel()])
    assert saved.status_code == 200, saved.text
    job = person.post(f"/api/storyboards/{board}/generate/").json()["job"]
    wait_for(
        lambda: person.get(f"/api/storyboards/{board}/quote/").json()["kept"] == [1],
        timeout=120,
        every=0.3,
        what=f"job {job}'s panel to be delivered and kept",
    )
    return person, board


def patch(person: Visitor, board: int, panels: list[dict]):
    return person.request(
        "PATCH", f"/api/storyboards/{board}/", json={"characters": CAST, "panels": panels}
    )


def page(person: Visitor, board: int, lang: str = "") -> Image.Image:
    query = f"?lang={lang}" if lang else ""
    pages = person.get(f"/api/storyboards/{board}/pages/{query}")
    assert pages.status_code == 200, pages.text
    image = person.get(pages.json()["pages"][0]["image_url"])
    assert image.status_code == 200
    return Image.open(io.BytesIO(image.content)).convert("L")


def changed(before: Image.Image, after: Image.Image, box: tuple[float, ...]) -> int:
    """How many pixels changed inside `box` (fractions of the page) between two pages."""
    w, h = before.size
    crop = (round(box[0] * w), round(box[1] * h), round(box[2] * w), round(box[3] * h))
    difference = ImageChops.difference(before, after).crop(crop)
    return sum(difference.histogram()[40:])


TOP_LEFT, BOTTOM_RIGHT = (0.0, 0.0, 0.5, 0.5), (0.5, 0.5, 1.0, 1.0)
# The corners nothing was moved to or from, short of the middle: a panel alone on its page
# is lettered in larger type (one size a page, scaled with its frames), and a balloon
# centred in a quarter may reach a little past its middle lines.
TOP_RIGHT, BOTTOM_LEFT = (0.6, 0.0, 1.0, 0.4), (0.0, 0.6, 0.4, 1.0)


def test_styles_places_and_sound_effects_are_kept_cost_nothing_and_redraw_the_page(stack):
    person, board = rendered_comic(stack)
    before = person.get(f"/api/storyboards/{board}/").json()["panels"][0]
    assert before["dialogue"] == [LINE | {"style": "speech", "place": None}]
    assert before["sfx"] == []

    top_left = {"x": 0.2, "y": 0.18, "tail": {"x": 0.3, "y": 0.32}}
    sfx = [{"text": "BOOM", "x": 0.75, "y": 0.2, "size": 0.2, "angle": 12}]
    saved = patch(person, board, [panel(dialogue=[LINE | {"style": "shout", "place": top_left}])])
    assert saved.status_code == 200, saved.text
    first = page(person, board)
    kept = saved.json()["panels"][0]
    assert kept["dialogue"] == [LINE | {"style": "shout", "place": top_left}]
    assert kept["art_hash"] == before["art_hash"]
    assert kept["content_hash"] != before["content_hash"]

    # the balloon moves to the bottom right, its tail with it, as a thought
    bottom_right = {"x": 0.78, "y": 0.8, "tail": {"x": 0.7, "y": 0.66}}
    moved = patch(
        person, board, [panel(dialogue=[LINE | {"style": "thought", "place": bottom_right}])]
    )
    assert moved.status_code == 200, moved.text
    second = page(person, board)
    assert changed(first, second, TOP_LEFT) > 300, "gone from where it was"
    assert changed(first, second, BOTTOM_RIGHT) > 300, "drawn where it went"
    assert changed(first, second, TOP_RIGHT) < 50 and changed(first, second, BOTTOM_LEFT) < 50

    with_sfx = patch(
        person,
        board,
        [panel(dialogue=[LINE | {"style": "thought", "place": bottom_right}], sfx=sfx)],
    )
    assert with_sfx.status_code == 200, with_sfx.text
    third = page(person, board)
    assert changed(second, third, TOP_RIGHT) > 300, "the sound effect is lettered"

    # round trip: what was saved reads back as it was sent; the art is the same art
    read = person.get(f"/api/storyboards/{board}/").json()["panels"][0]
    assert read["dialogue"] == [LINE | {"style": "thought", "place": bottom_right}]
    assert read["sfx"] == sfx
    assert read["art_hash"] == before["art_hash"]
    assert len({before["content_hash"], kept["content_hash"], read["content_hash"]}) == 3
    quote = person.get(f"/api/storyboards/{board}/quote/").json()
    assert quote["credits"] == 0 and quote["render"] == [] and quote["kept"] == [1]

    # every export follows the lettering; the CBZ's ComicInfo stays valid
    for kind, mime in (
        ("pdf", "application/pdf"),
        ("cbz", "application/vnd.comicbook+zip"),
        ("webtoon", "image/png"),
    ):
        answer = person.get(f"/api/storyboards/{board}/export/?format={kind}")
        assert answer.status_code == 200 and answer.headers["Content-Type"].startswith(mime)
    cbz = person.get(f"/api/storyboards/{board}/export/?format=cbz").content
    with zipfile.ZipFile(io.BytesIO(cbz)) as archive:
        assert comicinfo_schema().is_valid(archive.read("ComicInfo.xml").decode())
        (name,) = [n for n in archive.namelist() if n.endswith((".png", ".jpg"))]
        exported = Image.open(io.BytesIO(archive.read(name))).convert("L")
    assert exported.size == third.size
    assert sum(ImageChops.difference(exported, third).histogram()[40:]) < 50


@pytest.mark.parametrize(
    "change, where",
    [
        ({"dialogue": [LINE | {"style": "sing"}]}, "style"),
        ({"dialogue": [LINE | {"place": {"x": 1.2, "y": 0.5}}]}, "place"),
        (
            {"dialogue": [LINE | {"place": {"x": 0.5, "y": 0.5, "tail": {"x": 0.5, "y": -0.1}}}]},
            "tail",
        ),
        ({"sfx": [{"text": "DON", "x": 0.5, "y": 0.5}] * 9}, "sfx"),
        ({"sfx": [{"text": "D" * 41, "x": 0.5, "y": 0.5}]}, "sfx"),
        ({"sfx": [{"text": "DON", "x": 0.5, "y": 1.5}]}, "sfx"),
    ],
)
def test_lettering_out_of_bounds_is_refused_whole(stack, change, where):
    person = Visitor(stack.base_url)
    board = person.post("/api/storyboards/", {"title": "Bounds"}).json()["id"]
    assert patch(person, board, [panel()]).status_code == 200
    version = person.get(f"/api/storyboards/{board}/").json()["version"]
    answer = patch(person, board, [panel(**change)])
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "invalid" and where in answer.json()["detail"]
    assert person.get(f"/api/storyboards/{board}/").json()["version"] == version


def test_a_translation_keeps_the_originals_balloons_and_translates_sound_effects(stack):
    person, board = rendered_comic(stack)
    placed = {"x": 0.2, "y": 0.2, "tail": {"x": 0.3, "y": 0.34}}
    sfx = [{"text": "DOOM", "x": 0.8, "y": 0.15, "size": 0.15, "angle": 0}]
    line = LINE | {"style": "whisper", "place": placed}
    assert patch(person, board, [panel(dialogue=[line], sfx=sfx)]).status_code == 200
    put = person.request(
        "PUT",
        f"/api/storyboards/{board}/translations/ja/",
        json={"panels": [{"index": 1, "dialogue": ["こっちよ、早く！"], "sfx": ["ゴゴゴ"]}]},
    )
    assert put.status_code == 200, put.text
    translated = put.json()["panels"][0]
    assert translated["dialogue"][0] | {"text": ""} == translated["dialogue"][0] | {
        "text": "",
        "style": "whisper",
        "place": placed,
    }
    assert [(e["text"], e["original"]) for e in translated["sfx"]] == [("ゴゴゴ", "DOOM")]
    first = page(person, board, "ja")

    moved = {"x": 0.75, "y": 0.8, "tail": {"x": 0.68, "y": 0.66}}
    line = LINE | {"style": "whisper", "place": moved}
    assert patch(person, board, [panel(dialogue=[line], sfx=sfx)]).status_code == 200
    second = page(person, board, "ja")
    # the Japanese balloon went where the original's went; the translated sfx stayed
    assert changed(first, second, TOP_LEFT) > 300 and changed(first, second, BOTTOM_RIGHT) > 300
    assert changed(first, second, TOP_RIGHT) < 50
    original = page(person, board)
    assert changed(original, second, TOP_RIGHT) > 300, "ゴゴゴ, not DOOM"
    quote = person.get(f"/api/storyboards/{board}/quote/").json()
    assert quote["credits"] == 0
