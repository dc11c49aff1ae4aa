"""Roughs on the admin page: their GPU seconds beside the finals' and speculation's, and
the share of finals drawn from a rough (free to people, the operator's cost)."""

import pytest
from django.urls import reverse

from mangagen.jobs.models import RenderAttempt
from speculation import report
from tests.support import factories

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("instant_renders"),
    pytest.mark.board(panels=[{"description": "One."}, {"description": "Two."}]),
]


def test_the_roughs_gpu_seconds_are_shown_beside_the_finals(
    board, user, person, run, rough_queue, settings, make_user, client
):
    settings.RENDER_SECONDS, settings.ROUGH_SECONDS = 0.2, 0.05
    factories.funded_account(user, 5)
    with run.commits():
        person.post(reverse("api-storyboard-roughs", args=[board.pk]))
    assert run.draw_roughs() == ["ready", "ready"]
    job = run.generate(user, board)
    assert run.render() == "delivered"

    day = report.report()[0]
    assert day.roughs_drawn == 2 and 0.1 <= day.gpu_seconds_roughs < 0.4
    [attempt] = RenderAttempt.objects.filter(job=job)
    assert day.gpu_seconds_finals == pytest.approx(
        attempt.phases["cold_start"] + attempt.phases["render"]
    )
    assert day.gpu_seconds_finals >= 0.2 and day.gpu_seconds_speculation == 0
    assert day.roughs_share == pytest.approx(day.gpu_seconds_roughs / day.gpu_seconds_finals)
    assert (day.finals_from_rough, day.finals_drawn) == (1, 1)

    client.force_login(make_user(is_staff=True, is_superuser=True))
    html = client.get("/admin/speculation/speculation/").content.decode()
    assert "GPU seconds: finals / speculative finals / roughs" in html
    assert "2 roughs" in html and "of the finals' GPU seconds" in html
    assert "Finals drawn from a rough" in html and "1 of 1 (100%)" in html
