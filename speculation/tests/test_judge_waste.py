"""The admin Speculation page shows the judge beside speculation's waste: its
acceptance rate, and its redraws as the operator's cost (never charged to anyone)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from mangagen.jobs import services as jobs
from mangagen.jobs.models import JobPanel
from mangagen.storyboards import services as storyboards
from speculation import report

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("instant_renders")]


def test_the_judges_acceptance_and_redraws_are_counted_with_their_cost(
    user, account, enqueued, settings, django_capture_on_commit_callbacks, client, make_user
):
    settings.RENDER_COST_USD = 0.01
    board = storyboards.create_storyboard(owner=user, title="Judged")
    board = storyboards.update_storyboard(
        storyboard=board, panels=[{"description": f"Panel {i}."} for i in range(1, 5)]
    )
    with django_capture_on_commit_callbacks(execute=True):
        job = jobs.start_job(user=user, storyboard=board)
    now = timezone.now()
    checks = [
        {"score": 0.9, "redraws": 0, "reason": "", "low": False},  # accepted at once
        {"score": 0.8, "redraws": 1, "reason": "", "low": False},
        {"score": 0.3, "redraws": 2, "reason": "", "low": True},
        None,  # unchecked
    ]
    for panel, check in zip(job.panels.order_by("index"), checks, strict=True):
        JobPanel.objects.filter(pk=panel.pk).update(rendered_at=now, judge_check=check)
    day = report.period(label="day", since=now - timedelta(hours=1), until=now + timedelta(1))
    assert (day.judged, day.judge_accepted, day.judge_redraws) == (3, 1, 3)
    assert day.judge_acceptance == pytest.approx(1 / 3)
    assert day.judge_redraw_cost == pytest.approx(0.03)
    before = report.period(label="before", since=now - timedelta(days=2), until=now)
    assert before.judged == 0 and before.judge_acceptance is None
    client.force_login(make_user("boss", is_staff=True, is_superuser=True))
    html = client.get("/admin/speculation/speculation/").content.decode()
    assert "Judge: accepted at once" in html
    assert '<td class="judge-accepted">1 of 3 (33%)</td>' in html
    assert '<td class="judge-redraws">3 · $0.030</td>' in html
