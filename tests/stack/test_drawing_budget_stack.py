"""What one account can make the server store or draw, on the whole stack (issue #33,
items 1 and 2): daphne (two web processes) and the Celery workers, as `runstack`
starts them, on a Redis of the test's own so that `INFO memory` measures them alone.

- 200 spellings of `?lang=` on one panel's image URL grew Redis by 25.9 MB (every
  spelling kept its own lettered picture); now each spelling of a language the
  comic has is that language's one picture, and any other answers 404
  `no_such_translation` and keeps nothing.
- A series export's page builds never saw the drawing budget move, and two at once
  both passed; now an export is reckoned up front (EXPORT_DRAWING_SECONDS_PER_PAGE a
  page) against what the person's requests spent in the last minute, in every web
  process, and refused before anything is drawn when it would not fit.
"""

from __future__ import annotations

import io
from pathlib import Path
from urllib.parse import quote

import pytest
import redis
import requests

from tests.support.people import Visitor
from tests.support.redis_server import start_redis
from tests.support.stack import ROOT, Stack, free_port, stack
from tests.support.waiting import wait_for

# One page a chapter (one panel each), reckoned at 5 CPU seconds: a budget of 10
# fits a two-chapter series, and neither a three-chapter one nor two exports of the
# two-chapter one. Drawing a page takes far less than 5 s: before, all were built.
PAGE_SECONDS = 5
BUDGET = 2 * PAGE_SECONDS


@pytest.fixture(scope="module", name="stack")
def budget_stack(tmp_path_factory):
    port = free_port()
    own_redis = start_redis(port)
    folder = tmp_path_factory.mktemp("budget-stack")
    env = {
        "REDIS_URL": f"redis://127.0.0.1:{port}/0",
        "WEB_PROCESSES": "2",
        "RENDER_COLD_START_SECONDS": "0",
        "RENDER_SECONDS": "0.1",
        # Pictures the size of a real render's (a lettered panel of the placeholder
        # renderer at the default size is about 23 KB: this makes each some 65 KB).
        "RENDER_WIDTH": "1536",
        "RENDER_HEIGHT": "1088",
        "SPECULATION_ENABLED": "off",
        "SPECULATION_LOOKAHEAD": "0",
        "DRAWING_CPU_SECONDS_PER_MINUTE": str(BUDGET),
        "EXPORT_DRAWING_SECONDS_PER_PAGE": str(PAGE_SECONDS),
        "MEDIA_ROOT": str(folder / "media"),
        "BEAT_SCHEDULE_FILE": str(folder / "beat-schedule"),
    }
    try:
        with stack("budget-stack", log=ROOT / "artifacts" / "budget-stack.log", **env) as running:
            yield running, redis.Redis(port=port)
    finally:
        own_redis.terminate()
        own_redis.wait(timeout=30)


# --- the lettered cache ----------------------------------------------------------------


def delivered_panel(person: Visitor) -> str:
    """A one-panel comic in English with a Japanese translation, generated and shown:
    its panel's image URL."""
    assert person.post("/credits/demo/", allow_redirects=False).status_code == 302
    board = person.post(
        "/api/storyboards/",
        {
            "title": "Spellings",
            "characters": [{"name": "Aiko", "description": "red scarf"}],
            "panels": [
                {
                    "description": "Aiko on a rooftop.",
                    "characters": ["Aiko"],
                    "dialogue": [{"speaker": "Aiko", "text": "Late again."}],
                }
            ],
        },
    )
    assert board.status_code == 201, board.text
    board_id = board.json()["id"]
    japanese = {"title": "綴り", "panels": [{"index": 1, "dialogue": ["また遅い。"]}]}
    put = person.request("PUT", f"/api/storyboards/{board_id}/translations/ja/", json=japanese)
    assert put.status_code == 200, put.text
    generated = person.post(f"/api/storyboards/{board_id}/generate/")
    assert generated.status_code == 201, generated.text
    job = f"/api/jobs/{generated.json()['job']}/"

    def shown() -> str | None:
        panel = person.get(job).json()["panels"][0]
        return panel["image_url"] if panel["state"] == "delivered" else None

    return wait_for(shown, timeout=120, what="the panel to be delivered")


def spellings() -> list[tuple[str, str | None]]:
    """200 spellings of `?lang=`, each with the language it names for this comic
    (None: one it does not have)."""
    cases = {"en": ("en", "EN", "En", "eN"), "ja": ("ja", "JA", "Ja", "jA")}
    found: list[tuple[str, str | None]] = []
    for n in range(100):  # the original's language, padded: `en%20`, `%20%20EN%20`…
        found.append((" " * (n % 10) + cases["en"][n % 4] + " " * (n // 10), "en"))
    for n in range(50):  # the translation's
        found.append(("\t" * (n % 5) + cases["ja"][n % 4] + " " * (n // 5), "ja"))
    others = ["de", "ko", "fr", "en-us", "ja-jp", "en_", "e n", "xx", "english", "日本語"]
    for n in range(50):  # languages this comic has not
        found.append((others[n % 10] + " " * (n // 10), None))
    assert len({spelling for spelling, _ in found}) == 200
    return found


def test_200_spellings_of_a_language_grow_redis_by_less_than_3_mb(stack):
    running, own_redis = stack
    person = Visitor(running.base_url)
    image = delivered_panel(person)
    pictures = {"en": person.get(image), "ja": person.get(f"{image}?lang=ja")}
    assert all(p.status_code == 200 for p in pictures.values())
    assert pictures["en"].content != pictures["ja"].content

    before = own_redis.info("memory")["used_memory"]
    answers = [
        (spelling, language, person.get(f"{image}?lang={quote(spelling, safe='')}"))
        for spelling, language in spellings()
    ]
    grown = own_redis.info("memory")["used_memory"] - before
    print(f"Redis used_memory grew by {grown:,} bytes over 200 spellings")
    assert grown < 3 * 1024 * 1024
    for spelling, language, answer in answers:
        if language is None:
            assert answer.status_code == 404, (spelling, answer.status_code)
            assert answer.headers["Content-Type"] == "application/json"
            assert answer.json()["error"] == "no_such_translation"
        else:
            assert answer.status_code == 200, (spelling, answer.text[:200])
            assert answer.content == pictures[language].content, spelling
            assert answer.headers["ETag"] == pictures[language].headers["ETag"]


# --- series exports --------------------------------------------------------------------


def drawn_series(running: Stack, person: Visitor, chapters: int) -> int:
    """A series of `chapters` chapters of one kept panel each (one page each), made in
    the stack's database and media as a Generate would leave them."""
    made = running.shell(
        "from django.contrib.auth import get_user_model;"
        "from mangagen.series.models import Series;"
        "from mangagen.storyboards import services as storyboards;"
        "from tests.support import factories;"
        f"u = get_user_model().objects.get(username={person.username!r});"
        "s = Series.objects.create(owner=u, title='Budget');"
        f"boards = [factories.storyboard(u, title=f'Chapter {{n}}',"
        f" panels=[{{'description': f'Scene {{n}}.'}}]) for n in range(1, {chapters + 1})];"
        "[setattr(b, 'series', s) or setattr(b, 'chapter', n) or"
        " b.save(update_fields=['series', 'chapter']) for n, b in enumerate(boards, 1)];"
        # A take of its own per panel (keep_render is idempotent per source and attempt).
        "[storyboards.keep_render(storyboard_id=b.pk, art_hash=p.art_hash,"
        " image=factories.png(), faces={}, source=None, attempt=b.pk * 100 + p.index)"
        " for b in boards for p in b.panels.all()];"
        "print(s.pk)"
    )
    return int(made.strip())


def built_pages(running: Stack, storyboard: int) -> list[Path]:
    """The page files built for a comic (`pages/<comic>/<key>/…` in the stack's media)."""
    return sorted((Path(running.env["MEDIA_ROOT"]) / "pages" / str(storyboard)).glob("*/*"))


def pdf_export(person: Visitor, series: int) -> requests.Response:
    return person.get(f"/api/series/{series}/export/?format=pdf")


def test_a_series_export_past_the_budget_is_refused_before_anything_is_drawn(stack):
    running, _ = stack
    person = Visitor(running.base_url)
    series = drawn_series(running, person, chapters=3)  # reckoned 15 s: past the 10
    refused = pdf_export(person, series)
    assert refused.status_code == 429, refused.text[:300]
    assert refused.json()["error"] == "drawing_budget"
    assert "Retry-After" not in refused.headers, "larger than the budget: waiting won't help"
    chapters = person.get(f"/api/series/{series}/").json()["chapters"]
    for chapter in chapters:  # nothing was drawn: no page of any chapter is built
        pages = person.get(f"/api/storyboards/{chapter['storyboard']}/pages/").json()
        assert pages["kept"] == [1] and len(pages["pages"]) == 1
        assert not built_pages(running, chapter["storyboard"])


def test_two_exports_at_once_of_one_person_do_not_both_pass(stack, race):
    running, _ = stack
    person = Visitor(running.base_url)
    series = drawn_series(running, person, chapters=2)  # reckoned 10 s: fits alone
    other = requests.Session()
    other.cookies.update(person.http.cookies)

    def export(session: requests.Session):
        return lambda: session.get(
            f"{running.base_url}/api/series/{series}/export/?format=pdf", timeout=120
        )

    results = race([export(person.http), export(other)], timeout=180)
    for result in results:
        assert isinstance(result, requests.Response), result
    answers = dict(zip(("one", "two"), results, strict=True))
    statuses = sorted(answer.status_code for answer in answers.values())
    assert statuses in ([200, 429], [429, 429]), statuses
    for answer in answers.values():
        if answer.status_code == 429:
            assert answer.json()["error"] == "drawing_budget"
            assert 1 <= int(answer.headers["Retry-After"]) <= 60
        else:
            assert io.BytesIO(answer.content).read(5) == b"%PDF-"
    if statuses == [200, 429]:  # one more, after: the first's spend is in the window
        again = pdf_export(person, series)
        assert again.status_code == 429 and again.json()["error"] == "drawing_budget"
