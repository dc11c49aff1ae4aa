"""Finals keep what was approved: drawn from the panel's rough, at its page cell's shape."""

import threading

import pytest
from django.urls import reverse

from mangagen.jobs.models import JobPanel
from mangagen.pages.shapes import cell_aspects, ratio
from mangagen.roughs.models import Rough
from tests.support import factories

PANELS = [
    {"description": "A rooftop at night.", "shot": "establishing"},
    {"description": "Aiko runs.", "shot": "medium", "characters": ["Aiko"]},
    {"description": "Kenji waits.", "shot": "close-up", "characters": ["Kenji"]},
]

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("instant_renders"),
    pytest.mark.board(
        characters=[{"name": "Aiko", "description": "long black hair"}, {"name": "Kenji"}],
        panels=PANELS,
    ),
]


def ask(client, board, run):
    with run.commits():
        return client.post(reverse("api-storyboard-roughs", args=[board.pk]))


def job_panel(client, job, index) -> dict:
    body = client.get(reverse("api-job", args=[job.pk])).json()
    return next(p for p in body["panels"] if p["index"] == index)


def test_a_final_of_a_panel_with_a_ready_rough_is_drawn_from_it(person, board, run, rough_queue):
    factories.funded_account(board.owner, 5)
    ask(person, board, run)
    run.draw_roughs()
    job = run.generate(board.owner, board)
    assert run.render() == "delivered"
    panel = JobPanel.objects.get(job=job, index=1)
    rough = Rough.objects.get(index=1)
    assert panel.from_rough and panel.aspect == cell_aspects(storyboard=board)[1]
    shown = job_panel(person, job, 1)
    assert shown["from_rough"] is True and shown["aspect"] == panel.aspect
    # Drawn with the rough's seed, at its cell's shape.
    with panel.image.open("rb") as handle:
        from PIL import Image

        width, height = Image.open(handle).size
    assert abs(width - height * ratio(panel.aspect)) <= 8  # sizes are multiples of 8
    kept = board.kept_art.get()
    assert kept.aspect == panel.aspect and rough.aspect == panel.aspect


def test_a_redo_asks_for_another_picture_without_the_rough(person, board, run, rough_queue):
    factories.funded_account(board.owner, 5)
    ask(person, board, run)
    run.draw_roughs()
    job = run.generate(board.owner, board)
    run.render()
    with run.commits():
        person.post(reverse("api-job-redo", args=[job.pk, 1]))
    run.render()
    assert job_panel(person, job, 1)["from_rough"] is False


def test_no_rough_no_from_rough(person, board, run):
    factories.funded_account(board.owner, 5)
    job = run.generate(board.owner, board)
    run.render()
    assert job_panel(person, job, 1)["from_rough"] is False
    assert job_panel(person, job, 1)["aspect"] == cell_aspects(storyboard=board)[1]


def test_a_rough_in_flight_is_waited_for_then_drawn_from(person, board, run, rough_queue, settings):
    """The final's worker waits (ROUGH_WAIT_SECONDS at most) for the rough drawn beside it."""
    settings.ROUGH_WAIT_SECONDS = 30
    factories.funded_account(board.owner, 5)
    ask(person, board, run)
    job = run.generate(board.owner, board)
    # The roughs are drawn by another worker while the final's waits for panel one's.
    drawer = threading.Timer(0.5, run.draw_roughs)
    drawer.start()
    try:
        assert run.render() == "delivered"
    finally:
        drawer.join(timeout=60)
    assert job_panel(person, job, 1)["from_rough"] is True


def test_a_rough_that_does_not_come_in_time_is_not_waited_for(
    person, board, run, rough_queue, settings
):
    settings.ROUGH_WAIT_SECONDS = 0.3
    factories.funded_account(board.owner, 5)
    ask(person, board, run)  # asked for, never drawn
    job = run.generate(board.owner, board)
    assert run.render() == "delivered"
    assert job_panel(person, job, 1)["from_rough"] is False


def test_a_page_break_moved_after_a_final_marks_its_panel_fit_free_or_redraw_paid(
    person, board, run
):
    """Panels drawn on one page, then each alone on a page of its own: their cells' shapes
    changed.
    Fitting it is free and clears the mark; drawing it again sets its take aside, so the
    quote counts it and Generate draws it at the new shape; choosing the take brings it
    back."""
    factories.funded_account(board.owner, 5)
    job = run.finish(run.generate(board.owner, board))
    pages_url = reverse("api-storyboard-pages", args=[board.pk])
    assert person.get(pages_url).json()["reshaped"] == []
    drawn = JobPanel.objects.get(job=job, index=2).aspect
    person.patch(
        reverse("api-storyboard", args=[board.pk]),
        {"layout": {"breaks": [1, 2, 3], "templates": {"2": "splash"}}},
        content_type="application/json",
    )
    board.refresh_from_db()
    assert cell_aspects(storyboard=board)[2] != drawn
    marked = person.get(pages_url).json()["reshaped"]
    assert {1, 2} <= set(marked)  # each alone on a page now, drawn for a tier or half of one
    reshape = reverse("api-panel-reshape", args=[board.pk, 2])
    wrong = person.post(reshape, {"choice": "sideways"}, content_type="application/json")
    assert wrong.status_code == 400
    fitted = person.post(reshape, {"choice": "fit"}, content_type="application/json")
    assert fitted.status_code == 200 and fitted.json()["choice"] == "fit"
    assert 2 not in person.get(pages_url).json()["reshaped"]
    again = person.post(reshape, {"choice": "fit"}, content_type="application/json")
    assert again.status_code == 409 and again.json()["error"] == "not_reshaped"
    quote_url = reverse("api-storyboard-quote", args=[board.pk])
    assert person.get(quote_url).json()["render"] == []  # fitted: nothing to pay

    redraw = reverse("api-panel-reshape", args=[board.pk, 1])
    answer = person.post(redraw, {"choice": "redraw"}, content_type="application/json")
    assert answer.status_code == 200
    quote = person.get(quote_url).json()
    assert quote["render"] == [1] and quote["credits"] == 1  # drawn again at Generate
    take = board.kept_art.get(set_aside=True)
    chosen = person.post(reverse("api-panel-take-choose", args=[board.pk, 1, take.pk]))
    assert chosen.status_code == 204  # the take chosen again: back, nothing to pay
    assert person.get(quote_url).json()["render"] == []
