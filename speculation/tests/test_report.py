"""The metrics count recorded render attempts, not the ledger's free text."""

import importlib

import pytest
from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from ledger import services as ledger
from mangagen.jobs import services as jobs
from mangagen.jobs.models import Job, RenderAttempt
from mangagen.storyboards import services as storyboards
from speculation import report, services

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("instant_renders")]


def board_of(user, panels: int):
    board = storyboards.create_storyboard(owner=user, title=f"{panels} panels")
    return storyboards.update_storyboard(
        storyboard=board, panels=[{"description": f"Panel {i}."} for i in range(1, panels + 1)]
    )


@pytest.fixture
def act(run):
    """Calls `action` and renders what it enqueued, as an instant worker would."""

    def go(action, **kwargs):
        with run.commits():
            result = action(**kwargs)
        run.render_all()
        return result

    return go


def speculate_and_hit(user, board, act):
    speculation = act(services.speculate, user=user, storyboard=board)
    act(jobs.generate, user=user, storyboard=board)
    return Job.objects.get(pk=speculation.job_id)


def test_panel_ten_is_not_counted_as_panel_one(user, act):
    """The old filter, reference__startswith="job N panel 1", also took panels 10 to 19."""
    ledger.grant(account=ledger.account_for(user), amount=20, key="seed", reason="x")
    job = speculate_and_hit(user, board_of(user, 11), act)
    for index in range(1, 11):  # approve 1…10: panel 10 and 11 get holds of their own
        job = act(jobs.approve_panel, job=job, index=index)
    assert RenderAttempt.objects.filter(job=job).count() == 11

    day = report.report()[0]
    assert (day.credits_held, day.credits_captured, day.credits_released) == (1, 1, 0)


def test_each_figure_is_one_query_however_many_jobs(make_user, act):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            report.period(
                label="day", since=Job.objects.earliest("pk").created_at, until=timezone.now()
            )
        return len(captured)

    counts = []
    for n in range(3):
        user = make_user()
        ledger.grant(account=ledger.account_for(user), amount=5, key=f"seed-{n}", reason="x")
        speculate_and_hit(user, board_of(user, 2), act)
        counts.append(queries())
    assert counts[0] == counts[1] == counts[2]


def test_holds_placed_before_the_records_get_their_rows_from_their_exact_keys(user, act):
    """Migration 0009 reads the key (job:N:panel:I:attempt:A), never a prefix."""
    ledger.grant(account=ledger.account_for(user), amount=20, key="seed", reason="x")
    job = speculate_and_hit(user, board_of(user, 11), act)
    for index in range(1, 11):
        job = act(jobs.approve_panel, job=job, index=index)
    before = set(RenderAttempt.objects.values_list("job", "index", "attempt", "hold"))
    RenderAttempt.objects.all().delete()  # as before the migration: no records
    migration = importlib.import_module("mangagen.migrations.0009_render_attempts")
    migration.record_past_attempts(apps, None)
    migration.record_past_attempts(apps, None)  # twice: nothing doubles
    assert set(RenderAttempt.objects.values_list("job", "index", "attempt", "hold")) == before
    assert RenderAttempt.objects.count() == 11
