"""The drawing budget counted per build and over a rolling minute, and the lettered
cache keyed by the language lettered (issue #33, items 1 and 2).

Before: the budget was read once as a request began and counted when its
outermost block ended, so a series export's nested page builds never saw it
move, two requests of one person never saw each other's spend, and a fresh
minute gave a fresh budget whatever the last seconds spent. The lettered
cache was keyed by `?lang=` as sent: 200 spellings of one language on one
image grew Redis by 25.9 MB.
"""

from __future__ import annotations

import io
import threading
import time
import zipfile

import pytest
from django.core.cache import cache

from mangagen.jobs import selectors
from mangagen.jobs.lettered_images import lettered_cache_key
from mangagen.kernel import quotas
from mangagen.pages import builds
from mangagen.pages.models import PageBuild
from mangagen.series.models import Series
from tests.support import factories
from tests.support.pages import PANELS

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("instant_renders")]

NOW = 1_800_000_030.0  # 30 s into a minute


@pytest.fixture
def at(monkeypatch):
    """The budget's clock, set by the test: `at(seconds)` moves it."""
    moment = [NOW]
    monkeypatch.setattr(quotas, "clock", lambda: moment[0])

    def move(to: float) -> None:
        moment[0] = to

    return move


def burn(ms: float) -> None:
    """Spends `ms` of this thread's CPU time."""
    until = time.thread_time() + ms / 1000
    while time.thread_time() < until:
        pass


def spent_ms(user_id: int) -> int:
    return sum(quotas.spent_by_slot(user_id, quotas.clock()))


# --- the budget ------------------------------------------------------------------------


def test_nested_builds_are_counted_and_checked_each(settings, at):
    """Before: 300 nested builds in one request, none refused."""
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = 0.05  # 50 ms
    built = 0
    with pytest.raises(quotas.LimitReached) as refused, quotas.drawing(user_id=7):
        for _ in range(300):
            with quotas.drawing(user_id=7):
                burn(20)
                built += 1
    assert refused.value.code == quotas.Limit.DRAWING
    assert built == 3, "the build that crosses the budget, then none"
    assert 60 <= spent_ms(7) < 100


def test_the_outer_blocks_own_time_is_counted_before_each_nested_build(settings, at):
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = 0.05
    with pytest.raises(quotas.LimitReached), quotas.drawing(user_id=7):
        burn(60)  # assembling, say: no nested build yet
        with quotas.drawing(user_id=7):
            pytest.fail("the outer block spent the budget; the nested build is refused")


def test_two_requests_of_one_person_see_each_others_spend(settings, at):
    """Before: both passed the check made as each began."""
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = 0.05
    first_built, first_may_end = threading.Event(), threading.Event()

    def first_request() -> None:
        with quotas.drawing(user_id=7):  # an export, still running…
            with quotas.drawing(user_id=7):  # …whose first page is built
                burn(60)
            first_built.set()
            first_may_end.wait(timeout=30)

    thread = threading.Thread(target=first_request)
    thread.start()
    try:
        assert first_built.wait(timeout=30)
        with pytest.raises(quotas.LimitReached):
            quotas.check_drawing(user_id=7)
        quotas.check_drawing(user_id=8)  # someone else's budget is theirs
    finally:
        first_may_end.set()
        thread.join()


def test_the_window_rolls_rather_than_starting_afresh_each_minute(settings, at):
    """Before: the minute that began at 60 s gave the whole budget back at once."""
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = 0.05
    at(NOW + 20)  # 50 s into the minute
    with quotas.drawing(user_id=7):
        burn(60)
    at(NOW + 35)  # 5 s into the next minute: 15 s later
    with pytest.raises(quotas.LimitReached) as refused:
        quotas.check_drawing(user_id=7)
    assert 40 <= refused.value.retry_after <= 46  # when the spend is a minute old
    at(NOW + 20 + 61)
    quotas.check_drawing(user_id=7)


def in_another_request(call):
    """`call()` on a thread of its own, as another request of the person's would run it:
    what it returned, or the exception it raised."""
    found: list = []

    def run() -> None:
        try:
            found.append(call())
        except Exception as exc:
            found.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=30)
    return found[0]


def reserving(user_id: int, estimate: float, **options):
    def call():
        with quotas.drawing(user_id=user_id, estimate=estimate, **options):
            return "drawn"

    return call


def test_a_reservation_is_refused_up_front_and_seen_by_a_second_request(settings, at):
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = 1.0
    with (
        pytest.raises(quotas.LimitReached) as too_large,
        quotas.drawing(user_id=7, estimate=2.0, whole=True),
    ):
        pytest.fail("more than the whole budget: refused before the block runs")
    assert too_large.value.retry_after is None and "one by one" in str(too_large.value)
    assert spent_ms(7) == 0

    with quotas.drawing(user_id=7, estimate=0.8):
        for _ in range(3):  # its own builds draw on what it reserved
            with quotas.drawing(user_id=7, estimate=0.1):
                burn(5)
        assert spent_ms(7) == 800
        second = in_another_request(reserving(7, 0.8))  # another export, meanwhile
        assert isinstance(second, quotas.LimitReached), "two reservations do not fit"
        assert second.retry_after
        assert spent_ms(7) == 800, "the refused one gave its reservation back"
    assert 15 <= spent_ms(7) < 100, "what was not used went back"


def test_what_a_reservation_gives_back_goes_where_it_was_taken(settings, at):
    """Given back in a later slot, it would outlive the reservation in the window and
    count as budget to spend again."""
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = 1.0
    with quotas.drawing(user_id=7, estimate=0.8):
        at(NOW + 20)
        burn(5)
    assert spent_ms(7) < 20
    at(NOW + 61)  # the reservation's slot has left the window
    assert spent_ms(7) == 0


def test_builds_past_a_reservation_meet_the_budget(settings, at):
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = 0.1
    built = 0
    with pytest.raises(quotas.LimitReached), quotas.drawing(user_id=7, estimate=0.03):
        for _ in range(100):
            with quotas.drawing(user_id=7):
                burn(20)
                built += 1
    assert built >= 4 and spent_ms(7) < 100 + 20 + 10, "the budget, and the build that crossed it"


# --- a series export -------------------------------------------------------------------


@pytest.fixture
def series(user):
    """A series of two drawn chapters, three panels each."""
    made = Series.objects.create(owner=user, title="Rooftops")
    for number in (1, 2):
        board = factories.storyboard(user, title=f"Chapter {number}", panels=PANELS)
        board.series, board.chapter = made, number
        board.save(update_fields=["series", "chapter"])
        factories.keep(board)
    return made


def test_a_series_export_past_the_budget_is_refused_before_anything_is_drawn(
    person, series, settings, at
):
    """Before: it was built whole (its page builds never saw the budget move)."""
    pages = sum(len(builds.comic_of(storyboard=b).pages) for b in series.chapters.all())
    settings.EXPORT_DRAWING_SECONDS_PER_PAGE = 1.0
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = pages - 0.5
    refused = person.get(f"/api/series/{series.pk}/export/?format=pdf")
    assert refused.status_code == 429 and refused.json()["error"] == "drawing_budget"
    assert "Retry-After" not in refused, "waiting would not help: it is larger than the budget"
    assert not PageBuild.objects.exists(), "nothing was drawn"
    assert spent_ms(series.owner_id) == 0

    settings.DRAWING_CPU_SECONDS_PER_MINUTE = pages + 0.5
    made = person.get(f"/api/series/{series.pk}/export/?format=cbz")
    assert made.status_code == 200
    with zipfile.ZipFile(io.BytesIO(b"".join(made.streaming_content))) as archive:
        assert len(archive.namelist()) == 2
    assert 0 < spent_ms(series.owner_id) < pages * 1000, "what it did not use went back"


def test_a_series_export_refused_while_another_of_the_person_holds_the_budget(
    person, series, settings, at
):
    pages = sum(len(builds.comic_of(storyboard=b).pages) for b in series.chapters.all())
    settings.EXPORT_DRAWING_SECONDS_PER_PAGE = 1.0
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = pages * 1.5
    holding, may_end = threading.Event(), threading.Event()

    def first_export() -> None:  # another request of the person's, in flight
        with quotas.drawing(user_id=series.owner_id, estimate=pages):
            holding.set()
            may_end.wait(timeout=30)

    thread = threading.Thread(target=first_export)
    thread.start()
    try:
        assert holding.wait(timeout=30)
        refused = person.get(f"/api/series/{series.pk}/export/?format=pdf")
    finally:
        may_end.set()
        thread.join()
    assert refused.status_code == 429 and refused.json()["error"] == "drawing_budget"
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert not PageBuild.objects.exists()


# --- the lettered cache ----------------------------------------------------------------


@pytest.fixture
def shown(user, run, client):
    """A delivered panel of a comic in English with a Japanese translation: its image URL."""
    board = factories.storyboard(
        user,
        characters=[{"name": "Aiko"}],
        panels=[
            {
                "description": "Aiko waits.",
                "characters": ["Aiko"],
                "dialogue": [{"speaker": "Aiko", "text": "He is late."}],
            }
        ],
    )
    client.force_login(user)
    japanese = {"title": "屋上", "panels": [{"index": 1, "dialogue": ["遅い。"]}]}
    put = client.put(
        f"/api/storyboards/{board.pk}/translations/ja/", japanese, content_type="application/json"
    )
    assert put.status_code == 200, put.content
    job = run.finish(run.generate(user, board))
    return selectors.image_url(job.panels.get(index=1), job)


def entry(url: str) -> dict:
    return cache.get(lettered_cache_key(url.split("/media/renders/", 1)[1])) or {}


def test_any_spelling_of_a_language_takes_one_picture_and_others_none(account, shown, client):
    english = client.get(shown)
    japanese = client.get(f"{shown}?lang=ja")
    assert english.status_code == japanese.status_code == 200
    for spelling in ("EN", "en ", " En\t", "JA", "ja  ", "Ja"):
        answer = client.get(shown, {"lang": spelling})
        assert answer.status_code == 200
        same = japanese if spelling.strip().lower() == "ja" else english
        assert answer.content == same.content and answer["ETag"] == same["ETag"]
    for spelling in ("de", "en-", "e n", "xx", "ja_jp", "ja\x00", "en" * 40):
        answer = client.get(shown, {"lang": spelling})
        assert answer.status_code == 404, spelling
        assert answer.json()["error"] == "no_such_translation"
    assert sorted(entry(shown)) == ["", "ja"], "one picture per language lettered"


def test_one_images_pictures_are_bounded_in_bytes(account, shown, client, settings):
    first = client.get(shown)
    assert first.status_code == 200 and entry(shown)
    settings.LETTERED_CACHE_BYTES_PER_IMAGE = len(first.content) * 3 // 2
    assert client.get(f"{shown}?lang=ja").status_code == 200
    assert list(entry(shown)) == ["ja"], "the original's picture left to make room"
    settings.LETTERED_CACHE_BYTES_PER_IMAGE = len(first.content) // 2
    assert client.get(shown).content == first.content  # drawn, served…
    assert list(entry(shown)) == ["ja"], "…and not kept: larger than the bound alone"
