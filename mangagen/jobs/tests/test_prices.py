"""A render kind's price is one line of its declaration: changed there, the hold, the
quote and the buttons that start one follow it (docs/architecture.md's table follows
it too: tests/test_docs.py)."""

import json
import re

import pytest

from ledger.models import Hold
from mangagen.characters.kinds import Sheet
from mangagen.jobs import services
from mangagen.jobs.kinds.panel import Panel, Redo
from mangagen.jobs.kinds.touchup import TouchUpKind
from tests.support.factories import balance

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("instant_renders")]


def prices_on(page) -> dict:
    found = re.search(rb'<script id="render-prices" type="application/json">(.*?)</script>', page)
    assert found, "the page says no prices"
    return json.loads(found.group(1))


def test_a_changed_price_is_held_quoted_and_charged(user, account, board, person, run, monkeypatch):
    monkeypatch.setattr(Panel, "credits", 3)
    quote = person.get(f"/api/storyboards/{board.pk}/quote/").json()
    assert quote["render"] == [1, 2] and quote["credits"] == 6
    job = run.generate(user, board)
    assert job.panels.get(index=1).hold.amount == 3 and balance(account) == (7, 3)
    assert run.render() == "delivered"
    assert Hold.objects.get(pk=job.panels.get(index=1).hold_id).captured_amount == 3
    assert balance(account) == (7, 0)
    monkeypatch.setattr(Redo, "credits", 2)
    with run.commits():
        services.redo_panel(job=job, index=1)
    assert job.panels.get(index=1).hold.amount == 2 and balance(account) == (5, 2)


def test_the_buttons_say_each_kinds_price(user, account, board, person, run, monkeypatch):
    job = run.generate(user, board)
    page = person.get(f"/comics/{board.pk}/jobs/{job.pk}/").content
    assert b"Redo (1 credit)" in page
    assert prices_on(page) == {"panel": 1, "redo": 1, "touch_up": 1, "sheet": 1}
    monkeypatch.setattr(Redo, "credits", 2)
    monkeypatch.setattr(TouchUpKind, "credits", 3)
    monkeypatch.setattr(Sheet, "credits", 4)
    page = person.get(f"/comics/{board.pk}/jobs/{job.pk}/").content
    assert b"Redo (2 credits)" in page
    assert prices_on(page) == {"panel": 1, "redo": 2, "touch_up": 3, "sheet": 4}
    characters = person.get(f"/comics/{board.pk}/characters/").content
    assert b"Render sheet (4 credits)" in characters and b"Outfit sheet (4 credits)" in characters
