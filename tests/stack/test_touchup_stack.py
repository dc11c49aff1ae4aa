"""Touch-ups on the whole stack (daphne, both Celery workers, beat: tests/support/stack.py)
with the procedural renderer, driven over HTTP as the browser drives it: a box touch-up
of a delivered panel is a new current take for exactly one credit, every pixel outside
the box and its feather is the older take's and the inside is drawn again; choosing
the older take again is free; a bad box, a panel with nothing kept and a stranger are
refused with nothing held."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageChops

from mangagen.jobs import regions
from tests.support.people import Visitor
from tests.support.stack import ROOT, stack
from tests.support.waiting import wait_for

PANELS = [{"description": "Aiko waits on a rooftop.", "shot": "wide", "characters": ["Aiko"]}]
BOX = [0.2, 0.25, 0.4, 0.5]


@pytest.fixture(scope="module", name="stack")
def touchup_stack():
    env = {
        "RENDERER": "procedural",
        "RENDER_COLD_START_SECONDS": "0",
        "RENDER_SECONDS": "0.2",
        "RENDER_WIDTH": "320",
        "RENDER_HEIGHT": "240",
        "SPECULATION_LOOKAHEAD": "0",
    }
    with stack("touchup-stack", log=ROOT / "artifacts" / "touchup-stack.log", **env) as running:
        yield running


def credits(person: Visitor) -> tuple[int, int]:
    me = person.get("/api/me/").json()["credits"]
    return me["available"], me["held"]


def comic(person: Visitor) -> int:
    board = person.post("/api/storyboards/", {"title": "Touch-ups", "story": "Aiko waits."})
    assert board.status_code == 201, board.text
    board_id = board.json()["id"]
    patched = person.request(
        "PATCH",
        f"/api/storyboards/{board_id}/",
        json={"characters": [{"name": "Aiko", "description": "red scarf"}], "panels": PANELS},
    )
    assert patched.status_code == 200, patched.text
    return board_id


def job_of(person: Visitor, job: int) -> dict:
    return person.get(f"/api/jobs/{job}/").json()


def drawn_and_kept(person: Visitor) -> int:
    """A comic of one panel, generated, delivered and approved."""
    board = comic(person)
    generated = person.post(f"/api/storyboards/{board}/generate/")
    assert generated.status_code == 201, generated.text
    job = generated.json()["job"]
    wait_for(
        lambda: job_of(person, job)["panels"][0]["state"] == "delivered",
        timeout=60,
        what="panel one to be delivered",
    )
    assert person.post(f"/api/jobs/{job}/panels/1/approve/").status_code == 200
    return board


def picture(person: Visitor, url: str) -> Image.Image:
    answer = person.get(url)
    assert answer.status_code == 200, answer.text[:200]
    return Image.open(io.BytesIO(answer.content)).convert("RGB")


def takes(person: Visitor, board: int) -> list[dict]:
    return person.get(f"/api/storyboards/{board}/panels/1/takes/").json()["takes"]


def test_a_box_touch_up_redraws_the_box_alone_for_one_credit(stack):
    person = Visitor(stack.base_url)
    assert person.post("/credits/demo/", allow_redirects=False).status_code == 302
    board = drawn_and_kept(person)
    before = credits(person)
    assert before[1] == 0
    [older] = takes(person, board)

    answer = person.post(
        f"/api/storyboards/{board}/panels/1/touchup/", {"box": BOX, "prompt": "an umbrella"}
    )
    assert answer.status_code == 202, answer.text
    job = answer.json()["job"]
    assert answer.json()["panel"] == 1
    wait_for(lambda: job_of(person, job)["state"] == "completed", timeout=60, what="the touch-up")
    events = person.get(f"/api/jobs/{job}/events/").json()["events"]
    types = [e["type"] for e in events]
    assert "panel.rendering" in types and "panel.delivered" in types
    assert credits(person) == (before[0] - 1, 0)  # exactly one credit, captured

    newer, again = takes(person, board)
    assert newer["current"] and again["id"] == older["id"]
    old_picture, new_picture = (
        picture(person, older["image_url"]),
        picture(person, newer["image_url"]),
    )
    width, height = old_picture.size
    assert new_picture.size == (width, height)
    feather = regions.feather_pixels(width, height)
    x, y, w, h = BOX
    inner = (round(x * width), round(y * height), round((x + w) * width), round((y + h) * height))
    outer = (inner[0] - feather, inner[1] - feather, inner[2] + feather, inner[3] + feather)
    outside = Image.new("L", (width, height), 255)
    outside.paste(0, outer)
    difference = ImageChops.difference(old_picture, new_picture).convert("L")
    assert ImageChops.multiply(difference, outside).getbbox() is None
    assert difference.crop(inner).getbbox() is not None

    chosen = person.post(f"/api/storyboards/{board}/panels/1/takes/{older['id']}/choose/")
    assert chosen.status_code == 204
    assert takes(person, board)[0]["id"] == older["id"]
    assert credits(person) == (before[0] - 1, 0)  # the older one back, for nothing


def test_a_bad_box_nothing_kept_and_a_stranger_are_refused_with_nothing_held(stack):
    person = Visitor(stack.base_url)
    assert person.post("/credits/demo/", allow_redirects=False).status_code == 302
    board = drawn_and_kept(person)
    undrawn = comic(person)
    before = credits(person)
    path = f"/api/storyboards/{board}/panels/1/touchup/"

    bad = person.post(path, {"box": [0.5, 0.5, 0.8, 0.2]})
    assert bad.status_code == 400 and bad.json()["error"] == "invalid"
    whole = person.post(path, {"box": [0, 0, 1, 1]})
    assert whole.status_code == 400
    nothing = person.post(f"/api/storyboards/{undrawn}/panels/1/touchup/", {"box": BOX})
    assert nothing.status_code == 409 and nothing.json()["error"] == "nothing_to_touch_up"
    stranger = Visitor(stack.base_url)
    assert stranger.post("/credits/demo/", allow_redirects=False).status_code == 302
    theirs = credits(stranger)
    assert stranger.post(path, {"box": BOX}).status_code == 404
    assert credits(stranger) == theirs
    assert credits(person) == before and before[1] == 0
    assert len(takes(person, board)) == 1


def test_the_stack_logged_no_crash(stack):
    log = (ROOT / "artifacts" / "touchup-stack.log").read_text()
    assert "Traceback" not in log, log[-3000:]
