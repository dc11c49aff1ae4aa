"""Builds reserve their drawing before they start, a person has at most
DRAWING_BUILDS_IN_FLIGHT of them at once, and one build's cost is capped (issue #45,
item 1).

Before: `check_drawing` let a build start while the rolling window was under the budget
and wrote its CPU time only when it ended, so eight strips asked for together were
eight whole builds (76.9 CPU s against a budget of 20). tests/stack/ runs that on the
real server.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.core.cache import cache
from PIL import Image

from mangagen.kernel import quotas
from mangagen.lettering import Letterable, fonts
from mangagen.lettering.panel import SoundEffect
from mangagen.lettering.sound_effects import draw_sound_effect
from mangagen.pages import builds
from mangagen.pages.compose import MAX_FRAME_ASPECT, STRIP_WIDTH, PanelArt, compose_strip
from mangagen.pages.models import PageBuild
from tests.support import factories
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("instant_renders")]


def burn(ms: float) -> None:
    until = time.thread_time() + ms / 1000
    while time.thread_time() < until:
        pass


def spent_ms(user_id: int) -> int:
    return sum(quotas.spent_by_slot(user_id, quotas.clock()))


class Build(threading.Thread):
    """A build of person `user_id` on a thread of its own (another request), drawing
    until told to end: whether it started, or what refused it."""

    def __init__(self, user_id: int, *, estimate: float = 0.0, burn_ms: float = 0.0):
        super().__init__(daemon=True)
        self.user_id, self.estimate, self.burn_ms = user_id, estimate, burn_ms
        self.started_drawing, self.may_end, self.done = (threading.Event() for _ in range(3))
        self.refused: quotas.LimitReached | None = None

    def run(self) -> None:
        try:
            with quotas.drawing(user_id=self.user_id, estimate=self.estimate):
                self.started_drawing.set()
                burn(self.burn_ms)
                self.may_end.wait(timeout=30)
        except quotas.LimitReached as refused:
            self.refused = refused
        finally:
            self.done.set()

    def outcome(self) -> str:
        wait_for(
            lambda: self.started_drawing.is_set() or self.done.is_set(),
            timeout=30,
            what="the build to start or be refused",
        )
        return "refused" if self.refused else "drawing"


# --- builds in flight --------------------------------------------------------------------


def test_a_person_has_at_most_two_builds_in_flight(settings):
    settings.DRAWING_BUILDS_IN_FLIGHT = 2
    settings.DRAWING_BUILD_WAIT_SECONDS = 0  # refused at once: no slot comes free here
    first, second, third = Build(7), Build(7), Build(7)
    for build in (first, second):
        build.start()
        assert build.outcome() == "drawing"
    third.start()
    assert third.outcome() == "refused"
    assert third.refused.code == quotas.Limit.DRAWING
    assert third.refused.retry_after == quotas.BUILD_RETRY_SECONDS
    someone_else = Build(8)
    someone_else.start()
    assert someone_else.outcome() == "drawing"
    first.may_end.set()
    first.join()
    again = Build(7)
    again.start()
    assert again.outcome() == "drawing", "an ended build gives its slot back"
    for build in (second, someone_else, again):
        build.may_end.set()
        build.join()


def test_a_build_waits_for_a_slot_that_comes_free_instead_of_being_refused(settings):
    """One edit of a panel's lettering asks for its picture twice and its placements at
    once: the third build waits for one of the first two to end (a browser test once
    showed a broken picture from the refusal)."""
    settings.DRAWING_BUILDS_IN_FLIGHT = 1
    settings.DRAWING_BUILD_WAIT_SECONDS = 30
    first, waiting = Build(7), Build(7)
    first.start()
    assert first.outcome() == "drawing"
    waiting.start()
    assert not waiting.started_drawing.wait(timeout=0.3) and not waiting.done.is_set()
    first.may_end.set()
    assert waiting.outcome() == "drawing"
    waiting.may_end.set()
    for build in (first, waiting):
        build.join()


def test_a_build_s_own_nested_builds_take_no_slot(settings):
    settings.DRAWING_BUILDS_IN_FLIGHT = 1
    with quotas.drawing(user_id=7):  # an export
        for _ in range(3):
            with quotas.drawing(user_id=7):  # its pages
                pass


def test_a_crashed_build_s_slot_frees_itself(settings, monkeypatch):
    settings.DRAWING_BUILDS_IN_FLIGHT = 1
    settings.DRAWING_BUILD_WAIT_SECONDS = 0
    monkeypatch.setattr(quotas, "BUILD_LEASE_SECONDS", 1)
    quotas._take_lease(7)  # a build whose process died: never given back
    with pytest.raises(quotas.LimitReached):
        quotas.drawing(user_id=7).__enter__()

    def may_build() -> bool:
        try:
            with quotas.drawing(user_id=7):
                return True
        except quotas.LimitReached:
            return False

    wait_for(may_build, timeout=10, what="the dead build's lease to expire")


# --- reserved before they start -------------------------------------------------------------


def test_builds_started_together_use_at_most_the_budget_and_one_estimate(settings):
    """Before: all eight passed the check (the window was empty as each began)."""
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = 0.3
    settings.DRAWING_BUILDS_IN_FLIGHT = 8
    builds_ = [Build(7, estimate=0.12, burn_ms=100) for _ in range(8)]
    for build in builds_:
        build.start()
    outcomes = [build.outcome() for build in builds_]
    for build in builds_:
        build.may_end.set()
        build.join()
    assert outcomes.count("drawing") == 2, outcomes
    assert spent_ms(7) <= 300 + 120


def test_a_build_settles_with_what_it_really_took(settings):
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = 10
    with quotas.drawing(user_id=7, estimate=5.0):
        assert spent_ms(7) == 5000  # reserved before anything is drawn
        burn(30)
    assert 30 <= spent_ms(7) < 80, "what it did not use went back"
    with quotas.drawing(user_id=7, estimate=0.01):
        burn(60)
    assert 90 <= spent_ms(7) < 160, "what it took beyond its estimate is counted"


def test_a_build_reckoned_past_the_whole_budget_waits_for_an_idle_minute(settings):
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = 1
    with quotas.drawing(user_id=7, estimate=5.0):  # it reserves the whole budget
        assert spent_ms(7) == 1000
    quotas._add(7, 10, quotas.clock())
    with pytest.raises(quotas.LimitReached) as refused, quotas.drawing(user_id=7, estimate=5.0):
        pytest.fail("the whole budget is not free")
    assert refused.value.retry_after


def test_a_strip_is_refused_before_it_is_drawn_when_its_estimate_does_not_fit(
    person, user, settings
):
    board = factories.storyboard(
        user,
        panels=[
            {
                "description": f"Scene {n}.",
                "dialogue": [{"speaker": "", "text": "A long line of words. " * 12}] * 6,
                "sfx": [{"text": "BOOM" * 10, "x": 0.5, "y": 0.5, "size": 0.5}] * 8,
            }
            for n in range(6)
        ],
    )
    board.page_format = "webtoon"
    board.save(update_fields=["page_format"])
    factories.keep(board, indices=[1])
    comic = builds.comic_of(storyboard=board)
    estimate = builds.strip_estimate(comic)
    plain = builds.strip_estimate(builds.comic_of(storyboard=factories.storyboard(user)))
    assert estimate > 6 * plain, "reckoned from what it letters"
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = estimate * 1.5
    quotas._add(user.pk, round(estimate * 1000), quotas.clock())  # what is left: half of it
    refused = person.get(f"/api/storyboards/{board.pk}/export/?format=webtoon")
    assert refused.status_code == 429 and refused.json()["error"] == "drawing_budget"
    assert not PageBuild.objects.exists()
    cache.clear()
    made = person.get(f"/api/storyboards/{board.pk}/export/?format=webtoon")
    assert made.status_code == 200


# --- one build's cost is capped -----------------------------------------------------------


def test_a_sound_effect_s_layer_is_never_larger_than_its_panel(monkeypatch):
    made: list[tuple[int, int]] = []
    original = Image.new

    def recorded(mode, size, *args, **kwargs):
        made.append(tuple(size))
        return original(mode, size, *args, **kwargs)

    monkeypatch.setattr(Image, "new", recorded)
    panel = original("RGB", (200, 141), "white")
    longest = SoundEffect(text="W" * 40, x=0.5, y=0.5, size=0.5, angle=0)
    draw_sound_effect(panel, longest, vertical=False)
    assert made and all(w <= 200 and h <= 141 for w, h in made), made


def test_sound_effects_ask_the_font_cache_for_few_sizes():
    fonts.title_font.cache_clear()
    for height in range(60, 1200, 7):  # panels of every size
        panel = Image.new("RGB", (height, height), "white")
        draw_sound_effect(panel, SoundEffect(text="BAM", x=0.5, y=0.5, size=0.14), False)
    assert fonts.title_font.cache_info().misses <= 40
    assert fonts.cjk_font.cache_info().maxsize <= 16


def test_one_strip_frame_is_at_most_twice_as_tall_as_wide():
    tall = factories.png((100, 1000))
    art = PanelArt(index=1, letterable=Letterable(), load=lambda: tall)
    strip = compose_strip([art] * 3, direction="ltr")
    assert strip.height <= 3 * (STRIP_WIDTH * MAX_FRAME_ASPECT + 120) + 60
