"""Roughs on the whole stack (daphne, both Celery workers, beat), procedural renderer,
driven over HTTP and the comic's websocket as the browser drives them: a comic's roughs
all drawn after one POST, free (no credit moved, no hold), pushed as they land; nothing
for a person with no credit; a day's budget; one panel's shot changed draws that rough
alone; the rough pages lettered; Generate's finals drawn from the roughs, keeping their
composition (measured on the pictures)."""

from __future__ import annotations

import io
import json

import pytest
from PIL import Image

from tests.support.people import Visitor
from tests.support.pictures import outline_likeness
from tests.support.stack import ROOT, counted
from tests.support.stack import stack as stack_of_its_own
from tests.support.waiting import wait_for

CAST = [
    {"name": "Aiko", "description": "long black hair, red scarf"},
    {"name": "Kenji", "description": "spiky hair, glasses"},
]
# Four panels of the same two people in the same shot: only their descriptions differ, so
# each picture's composition is its seed's (its art hash's), and no two are framed alike.
PANELS = [
    {
        "description": f"Aiko and Kenji on the roof, beat {n}.",
        "shot": "medium",
        "characters": ["Aiko", "Kenji"],
    }
    for n in range(1, 5)
]
PANELS[1]["dialogue"] = [{"speaker": "Aiko", "text": "They're right behind us!"}]
BUDGET = 6


@pytest.fixture(scope="module")
def stack():
    running = stack_of_its_own(
        "roughs-stack",
        log=ROOT / "artifacts" / "roughs-stack.log",
        RENDERER="procedural",
        RENDER_COLD_START_SECONDS="0",
        RENDER_SECONDS="0.3",
        ROUGH_SECONDS="0.1",
        RENDER_WIDTH="480",
        RENDER_HEIGHT="340",
        ROUGHS_PER_PERSON_PER_DAY=str(BUDGET),
        SPECULATION_ENABLED="off",
        SPECULATION_LOOKAHEAD="0",
        METRICS_TOKEN="roughs-metrics",
    )
    with running:
        yield running


def comic(person: Visitor, panels=PANELS) -> int:
    board = person.post("/api/storyboards/", {"title": "Roughs", "story": "A roof."})
    assert board.status_code == 201, board.text
    board_id = board.json()["id"]
    patched = person.request(
        "PATCH", f"/api/storyboards/{board_id}/", json={"characters": CAST, "panels": panels}
    )
    assert patched.status_code == 200, patched.text
    return board_id


def roughs(person: Visitor, board: int) -> dict[int, dict]:
    return {r["index"]: r for r in person.get(f"/api/storyboards/{board}/roughs/").json()["roughs"]}


def all_ready(person: Visitor, board: int, count: int) -> bool:
    found = roughs(person, board)
    return len(found) == count and all(r["state"] == "ready" for r in found.values())


def ledger_of(person: Visitor) -> tuple:
    me = person.get("/api/me/").json()["credits"]
    history = person.get("/api/credits/transfers/").json()["count"]
    return me["available"], me["held"], history


def picture(person: Visitor, url: str) -> bytes:
    answer = person.get(url)
    assert answer.status_code == 200, answer.text[:200]
    return answer.content


def test_a_comics_roughs_are_drawn_free_pushed_as_they_land_and_bounded(stack):
    person = Visitor(stack.base_url)
    assert person.post("/credits/demo/", allow_redirects=False).status_code == 302
    board = comic(person)
    before = ledger_of(person)
    stream = person.websocket(f"/ws/storyboards/{board}/")
    first = json.loads(stream.recv())
    assert first["type"] == "roughs" and first["data"]["roughs"] == []

    asked = person.post(f"/api/storyboards/{board}/roughs/")
    assert asked.status_code == 202, asked.text
    assert {r["state"] for r in asked.json()["roughs"]} <= {"queued", "drawing", "ready"}
    wait_for(lambda: all_ready(person, board, 4), timeout=60, what="every rough to be drawn")
    # Pushed through daphne as each landed: four `ready` messages, one a panel.
    pushed: dict[int, str] = {}
    while len([s for s in pushed.values() if s == "ready"]) < 4:
        message = json.loads(stream.recv())
        assert message["type"] == "rough"
        pushed[message["data"]["index"]] = message["data"]["state"]
    assert sorted(pushed) == [1, 2, 3, 4]
    stream.close()
    assert counted(stack, "mangagen_roughs_total", outcome="ready") >= 4
    assert counted(stack, "mangagen_rough_seconds_count") >= 4
    # Free: no credit moved, no hold, not one line in the person's history.
    assert ledger_of(person) == before
    image = Image.open(io.BytesIO(picture(person, roughs(person, board)[1]["image_url"])))
    assert image.format == "PNG"
    stranger = Visitor(stack.base_url)
    assert stranger.get(roughs(person, board)[1]["image_url"]).status_code == 404

    # One panel's shot changed: that rough alone is drawn again.
    drawn = roughs(person, board)
    panels = [dict(p) for p in PANELS]
    panels[2] = {**panels[2], "shot": "close-up"}
    person.request("PATCH", f"/api/storyboards/{board}/", json={"panels": panels})
    again = person.post(f"/api/storyboards/{board}/roughs/")
    assert again.status_code == 202 and again.json()["budget"]["used"] == 5
    wait_for(lambda: all_ready(person, board, 4), timeout=60, what="panel 3's new rough")
    now = roughs(person, board)
    assert now[3]["art_hash"] != drawn[3]["art_hash"]
    assert {i: now[i] for i in (1, 2, 4)} == {i: drawn[i] for i in (1, 2, 4)}

    # The day's budget: one more, then 429 rough_budget and nothing drawn.
    assert person.post(f"/api/storyboards/{board}/panels/1/rough/").status_code == 202
    refused = person.post(f"/api/storyboards/{board}/panels/2/rough/")
    assert refused.status_code == 429 and refused.json()["error"] == "rough_budget"
    assert ledger_of(person) == before


def test_no_credit_no_rough(stack):
    person = Visitor(stack.base_url)
    board = comic(person)
    refused = person.post(f"/api/storyboards/{board}/roughs/")
    assert refused.status_code == 402 and refused.json()["error"] == "no_credits"
    assert roughs(person, board) == {}
    assert person.get("/api/credits/transfers/").json()["count"] == 0


def inked(region: Image.Image) -> int:
    """Pixels of near-black ink: lettering's (a rough is blue pencil on paper)."""
    return sum(region.convert("L").point(lambda v: 255 if v < 40 else 0).histogram()[255:])


def test_the_rough_pages_are_lettered_and_generate_keeps_each_roughs_composition(stack):
    person = Visitor(stack.base_url)
    assert person.post("/credits/demo/", allow_redirects=False).status_code == 302
    board = comic(person)
    assert person.post(f"/api/storyboards/{board}/roughs/").status_code == 202
    wait_for(lambda: all_ready(person, board, 4), timeout=60, what="every rough to be drawn")

    body = person.get(f"/api/storyboards/{board}/pages/?rough=1").json()
    assert body["roughs"] == [1, 2, 3, 4] and body["kept"] == []
    page = Image.open(io.BytesIO(picture(person, body["pages"][0]["image_url"]))).convert("RGB")
    width, height = page.size

    def cell(index: int) -> Image.Image:
        x0, y0, x1, y1 = body["pages"][0]["cells"][str(index)]
        w, h = (x1 - x0) * width, (y1 - y0) * height  # inside the border
        return page.crop(
            (
                x0 * width + w * 0.06,
                y0 * height + h * 0.06,
                x1 * width - w * 0.06,
                y1 * height - h * 0.06,
            )
        )

    assert inked(cell(2)) > 200  # panel 2's balloon and its words, lettered on its rough
    assert inked(cell(1)) < 50  # panel 1 says nothing: pencil alone

    sketches = {i: picture(person, r["image_url"]) for i, r in roughs(person, board).items()}
    generated = person.post(f"/api/storyboards/{board}/generate/")
    assert generated.status_code == 201, generated.text
    job = generated.json()["job"]
    finals: dict[int, bytes] = {}
    for index in range(1, 5):
        wait_for(
            lambda i=index: (
                person.get(f"/api/jobs/{job}/").json()["panels"][i - 1]["state"] == "delivered"
            ),
            timeout=60,
            what=f"panel {index} to be delivered",
        )
        panel = person.get(f"/api/jobs/{job}/").json()["panels"][index - 1]
        assert panel["from_rough"] is True and panel["aspect"]
        finals[index] = picture(person, panel["image_url"])
        assert person.post(f"/api/jobs/{job}/panels/{index}/approve/").status_code == 200
    # The composition kept: each final's outlines are its rough's, far more than another
    # panel's (the same two people in the same shot, framed by another seed). Panel 2 is
    # lettered over its final, so it is compared only as the others' other.
    for index in (1, 3, 4):
        kept = outline_likeness(sketches[index], finals[index])
        others = [outline_likeness(sketches[index], finals[j]) for j in (1, 3, 4) if j != index]
        assert kept > 0.6, (index, kept)
        assert kept > max(others) + 0.25, (index, kept, others)
