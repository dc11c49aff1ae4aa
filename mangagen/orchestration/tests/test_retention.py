"""Retention: event logs of long-ended jobs go; the jobs, holds and figures stay."""

import io
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from ledger.models import Hold
from mangagen.jobs.events import emit
from mangagen.jobs.models import Job, JobEvent, JobState
from mangagen.orchestration import pruning as retention
from mangagen.storyboards import services as storyboards

pytestmark = pytest.mark.django_db


@pytest.fixture
def jobs(user, settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    settings.RETENTION_DAYS = 30
    now = timezone.now()
    made = {}
    for name, state, ended_days_ago in [
        ("old", JobState.COMPLETED, 40),
        ("recent", JobState.CANCELLED, 5),
        ("live", JobState.AWAITING_DECISION, None),
    ]:
        board = storyboards.create_storyboard(owner=user, title=name)
        job = Job.objects.create(
            owner=user,
            storyboard=board,
            version="v",
            style="manga",
            state=state,
            finished_at=None if ended_days_ago is None else now - timedelta(days=ended_days_ago),
        )
        for n in range(3):
            emit(job=job, type="test.event", data={"n": n})
        made[name] = job
    return made


def test_the_cut_off_is_a_utc_midnight_retention_days_back(settings):
    settings.RETENTION_DAYS = 30
    now = datetime(2026, 11, 30, 15, 30, tzinfo=UTC)
    assert retention.cutoff(now=now) == datetime(2026, 10, 31, tzinfo=UTC)
    settings.RETENTION_DAYS = 60
    assert retention.cutoff(now=now) == datetime(2026, 10, 1, tzinfo=UTC)
    # Never nearer than the admin's widest figures look back (a month).
    settings.RETENTION_DAYS = 7
    assert retention.cutoff(now=now) == datetime(2026, 10, 31, tzinfo=UTC)


def test_event_logs_of_jobs_ended_long_ago_are_pruned(jobs):
    holds_before = Hold.objects.count()
    counts = retention.prune()
    assert counts["mangagen.jobs.retention.prune_job_events"] == 3
    assert not JobEvent.objects.filter(job=jobs["old"]).exists()
    assert JobEvent.objects.filter(job=jobs["recent"]).count() == 3
    assert JobEvent.objects.filter(job=jobs["live"]).count() == 3
    assert Job.objects.filter(pk=jobs["old"].pk).exists()  # the job itself stays
    assert Hold.objects.count() == holds_before
    assert retention.prune()["mangagen.jobs.retention.prune_job_events"] == 0


def test_a_long_live_job_keeps_its_log_whatever_its_age(jobs):
    Job.objects.filter(pk=jobs["live"].pk).update(finished_at=timezone.now() - timedelta(days=99))
    retention.prune()
    assert JobEvent.objects.filter(job=jobs["live"]).count() == 3


def test_the_command_and_the_beat_task_prune(jobs, settings):
    from mangagen import tasks

    out = io.StringIO()
    call_command("prune", stdout=out)
    assert "prune_job_events: 3" in out.getvalue()
    assert tasks.prune.name in {e["task"] for e in settings.CELERY_BEAT_SCHEDULE.values()}
    assert tasks.prune() == {
        "mangagen.jobs.retention.prune_job_events": 0,
        "speculation.retention.prune_declined": 0,
        "mangagen.roughs.retention.prune_roughs": 0,
        "render files of ended jobs": 0,
    }
