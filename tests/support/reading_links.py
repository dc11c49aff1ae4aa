"""Reading links on a running stack: a person's comic drawn by the workers and kept, and
what the public reader's preview tags say."""

from __future__ import annotations

import re

from tests.support.people import Visitor
from tests.support.waiting import wait_for

PANELS = [
    {
        "description": "Aiko waits on the roof.",
        "shot": "wide",
        "characters": ["Aiko"],
        "dialogue": [{"speaker": "Aiko", "text": "He is late."}],
    },
    {"description": "Aiko looks at the door.", "shot": "medium", "characters": ["Aiko"]},
]


def drawn_comic(base_url: str) -> tuple[Visitor, int]:
    """A person and their comic, its first panel rendered by the workers and kept."""
    owner = Visitor(base_url)
    assert owner.post("/credits/demo/", allow_redirects=False).status_code == 302
    board = owner.post("/api/storyboards/", {"title": "Rooftops", "story": "Aiko waits."})
    assert board.status_code == 201, board.text
    board_id = board.json()["id"]
    characters = [{"name": "Aiko", "description": "red scarf"}]
    patched = owner.request(
        "PATCH", f"/api/storyboards/{board_id}/", json={"characters": characters, "panels": PANELS}
    )
    assert patched.status_code == 200, patched.text
    assert owner.post(f"/api/storyboards/{board_id}/generate/").status_code == 201
    wait_for(
        lambda: owner.get(f"/api/storyboards/{board_id}/pages/").json()["kept"],
        timeout=60,
        every=0.2,
        what="panel one delivered and kept",
    )
    return owner, board_id


def og(html: str, name: str) -> str:
    match = re.search(rf'<meta property="og:{name}" content="([^"]*)">', html)
    assert match, f"no og:{name}"
    return match[1]
