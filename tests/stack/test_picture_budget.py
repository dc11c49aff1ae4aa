"""One budget of stored picture bytes per person (PICTURE_BYTES_PER_PERSON): uploaded
sheets, places' pictures, the library's copies and copies of sheets all count, and past
it the API answers the one error shape naming the budget. On the real server: each
~3 MB picture as a browser sends it, against a 7 MB budget.
"""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys

import pytest
from PIL import Image

from tests.support.people import Visitor
from tests.support.stack import ROOT, WebServer, migrated_database_url, own_redis_url

BUDGET = 7 * 1024 * 1024
PLACES = ["Rooftop", "Station", "Harbour"]


@pytest.fixture(scope="module")
def web():
    env = {
        "DATABASE_URL": migrated_database_url("picture_budget"),
        "REDIS_URL": own_redis_url(),
        "PICTURE_BYTES_PER_PERSON": str(BUDGET),
    }
    with WebServer(env=env, log=ROOT / "artifacts" / "picture-budget.log") as running:
        yield running


def noise(seed: int) -> bytes:
    """A JPEG of 1024 × 1024 pixels of noise: about 3 MB once stored as PNG."""
    pixels = random.Random(seed).randbytes(1024 * 1024 * 3)
    buffer = io.BytesIO()
    Image.frombytes("RGB", (1024, 1024), pixels).save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def put_picture(person: Visitor, board: int, place: str, seed: int):
    return person.request(
        "PUT",
        f"/api/storyboards/{board}/places/{place}/picture/",
        files={"image": (f"{place}.jpg", noise(seed), "image/jpeg")},
    )


def test_the_third_place_picture_past_the_budget_is_refused_naming_it(web):
    person = Visitor(web.base_url)
    board = person.post("/api/storyboards/", {"title": "Places", "story": "A walk."}).json()["id"]
    places = [{"name": name, "description": f"the {name.lower()}"} for name in PLACES]
    assert person.request("PATCH", f"/api/storyboards/{board}/", json={"places": places}).ok

    for seed, place in enumerate(PLACES[:2]):
        answer = put_picture(person, board, place, seed)
        assert answer.status_code == 200, answer.text
    refused = put_picture(person, board, PLACES[2], 2)

    assert refused.status_code == 400
    assert refused.headers["Content-Type"] == "application/json"
    body = refused.json()
    assert body["error"] == "sheet_uploads_full"
    assert body["budget"] == "PICTURE_BYTES_PER_PERSON" and body["limit_bytes"] == BUDGET
    assert "7 MB" in body["detail"]
    listed = person.get(f"/api/storyboards/{board}/").json()["places"]
    assert [p["picture"] is not None for p in listed] == [True, True, False], "nothing changed"

    # A copy into the library counts too: the Rooftop's picture would pass the budget.
    saved = person.post("/api/places/", {"storyboard": board, "name": PLACES[0]})
    assert saved.status_code == 400 and saved.json()["error"] == "sheet_uploads_full"
    assert person.get("/api/places/").json() == [], "nothing was kept"

    # Letting a picture go makes room again.
    gone = person.request("DELETE", f"/api/storyboards/{board}/places/{PLACES[0]}/picture/")
    assert gone.status_code == 204
    assert put_picture(person, board, PLACES[2], 2).status_code == 200


def budget_read(**env: str) -> int:
    unset = {"PICTURE_BYTES_PER_PERSON", "SHEET_UPLOAD_BYTES_PER_PERSON"}
    done = subprocess.run(
        [sys.executable, "-c",
         "from mangagen import settings as s; print(s.PICTURE_BYTES_PER_PERSON)"],
        cwd=ROOT,
        env={**{k: v for k, v in os.environ.items() if k not in unset}, "DEBUG": "on", **env},
        capture_output=True,
        text=True,
        check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def test_the_old_setting_is_the_budgets_fallback():
    assert budget_read() == 100 * 1024 * 1024
    assert budget_read(SHEET_UPLOAD_BYTES_PER_PERSON="123456") == 123456
    both = {"SHEET_UPLOAD_BYTES_PER_PERSON": "123456", "PICTURE_BYTES_PER_PERSON": "654321"}
    assert budget_read(**both) == 654321
