"""Races on PostgreSQL: every conditional end re-checks its condition on the locked row.

Each test makes the race happen every time: a second connection acts at the
exact moment between the first one's read and its row lock (the first
`SELECT … FOR UPDATE` on the jobs table), then the first carries on.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from ledger import services as ledger
from ledger.models import Hold
from mangagen.jobs import services, steps
from mangagen.jobs.kinds.panel import PANEL
from mangagen.jobs.models import Job, JobState
from mangagen.storyboards import services as storyboards
from tests.support import factories
from tests.support.concurrency import meanwhile
from tests.support.ledger_invariants import assert_ledger_invariants

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("instant_renders", "enqueued"),
]

# Every path that confirms or ends a job locks its comic's row first (the one lock
# order, storyboards/lock_objects.py): the other connection acts just before that.
COMIC = "mangagen_storyboard"


@pytest.fixture
def funded(user):
    ledger.grant(account=ledger.account_for(user), amount=5, key="seed", reason="x")
    return user


def speculative_job(user, board, *, confirm_in=600) -> Job:
    return services.start_job(
        user=user,
        storyboard=board,
        confirmed=False,
        confirm_by=timezone.now() + timedelta(seconds=confirm_in),
    )


def test_a_closing_tabs_beacon_never_cancels_the_job_the_other_tab_just_confirmed(funded, client):
    board = factories.storyboard(funded)
    job = speculative_job(funded, board)
    client.force_login(funded)
    with meanwhile(lambda: services.confirm_job(job=job), table=COMIC) as other:
        response = client.post(f"/api/jobs/{job.pk}/cancel/?if_unconfirmed=1")
    assert other and not isinstance(other[0], Exception), other
    assert response.status_code == 200
    job.refresh_from_db()
    assert job.confirmed and job.live, job.end_reason
    assert response.json()["confirmed"] is True and response.json()["state"] == job.state
    assert_ledger_invariants()


def test_the_deadline_task_never_expires_a_job_confirmed_after_its_read(funded):
    job = speculative_job(funded, factories.storyboard(funded), confirm_in=60)
    later = job.confirm_by + timedelta(seconds=1)  # the task's clock, a moment past confirm_by
    with meanwhile(lambda: services.confirm_job(job=job), table=COMIC) as other:
        expired = services.expire_job_if_due(job_id=job.pk, now=later)
    assert other and other[0].confirmed
    job.refresh_from_db()
    assert not expired
    assert job.confirmed and job.live
    assert_ledger_invariants()


def test_the_sweep_never_expires_a_job_confirmed_after_its_read(funded):
    job = speculative_job(funded, factories.storyboard(funded), confirm_in=60)
    later = job.confirm_by + timedelta(seconds=1)
    with meanwhile(lambda: services.confirm_job(job=job), table=COMIC) as other:
        expired = services.expire_due_jobs(now=later)
    assert other and other[0].confirmed
    job.refresh_from_db()
    assert expired == 0
    assert job.confirmed and job.live
    assert_ledger_invariants()


def test_generate_never_answers_attached_with_a_job_ended_after_its_read(funded):
    board = factories.storyboard(funded)
    job = speculative_job(funded, board)
    with meanwhile(lambda: services.cancel_job(job=job), table=COMIC):
        answer, how = services.generate(user=funded, storyboard=board)
    answer.refresh_from_db()
    assert answer.live and answer.confirmed
    assert how == "created" and answer.pk != job.pk
    job.refresh_from_db()
    assert job.state == JobState.CANCELLED
    assert_ledger_invariants()


def test_confirm_and_expiry_agree_at_the_deadline(funded, monkeypatch):
    """At confirm_by exactly the job is due: Generate starts afresh, the old hold is released."""
    board = factories.storyboard(funded)
    job = speculative_job(funded, board, confirm_in=60)
    monkeypatch.setattr(timezone, "now", lambda: job.confirm_by)
    assert Job.objects.filter(pk=job.pk, confirm_by__lte=timezone.now()).exists()  # due
    answer, how = services.generate(user=funded, storyboard=board)
    assert how == "created" and answer.pk != job.pk
    job.refresh_from_db()
    assert job.state == JobState.EXPIRED and not job.confirmed
    assert Hold.objects.filter(state=Hold.State.PENDING).count() == 1  # the new job's
    assert_ledger_invariants()


def test_confirm_refuses_a_job_past_its_confirm_by(funded):
    job = speculative_job(funded, factories.storyboard(funded), confirm_in=60)
    Job.objects.filter(pk=job.pk).update(confirm_by=timezone.now() - timedelta(seconds=1))
    confirmed = services.confirm_job(job=job)
    assert not confirmed.confirmed and confirmed.state == JobState.EXPIRED
    assert ledger.account_for(funded).held == 0
    assert_ledger_invariants()


def test_cancels_and_the_hold_sweep_in_parallel_never_deadlock(funded, settings, race):
    """The ledger locks hold → key → accounts by pk; a job's end locks all its holds first.

    Each job holds three holds, all past expiry, so the ledger's sweep and the
    cancels contend for the same holds and the same account. Bounded by count.
    """
    settings.SPECULATION_LOOKAHEAD = 0
    ledger.grant(account=ledger.account_for(funded), amount=200, key="more", reason="x")
    jobs = []
    for n in range(20):
        board = storyboards.create_storyboard(owner=funded, title=f"B{n}")
        board = storyboards.update_storyboard(
            storyboard=board, panels=[{"description": str(i)} for i in range(3)]
        )
        job = services.start_job(user=funded, storyboard=board)
        from django.db import transaction

        with transaction.atomic():
            locked = Job.objects.select_for_update().get(pk=job.pk)
            for panel in locked.panels.select_for_update().filter(index__gt=1):
                steps.queue_render(job=locked, panel=panel, kind=PANEL, lookahead=True)
        jobs.append(job)
    Hold.objects.filter(state=Hold.State.PENDING).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    errors: list = []

    def cancel_all():
        for job in reversed(jobs):
            try:
                services.cancel_job(job=job)
            except Exception as exc:
                errors.append(exc)

    def sweep_until_done():
        for _ in range(200):
            try:
                ledger.expire_stale_holds()
            except Exception as exc:
                errors.append(exc)
            if not Hold.objects.filter(state=Hold.State.PENDING).exists():
                break

    assert race([cancel_all, sweep_until_done], timeout=120) == [None, None]
    assert errors == []
    assert not Hold.objects.filter(state=Hold.State.PENDING).exists()
    assert set(Job.objects.values_list("state", flat=True)) == {JobState.CANCELLED}
    assert_ledger_invariants()


def test_if_unconfirmed_0_is_a_plain_cancel(funded, client):
    job = speculative_job(funded, factories.storyboard(funded))
    services.confirm_job(job=job)
    client.force_login(funded)
    response = client.post(f"/api/jobs/{job.pk}/cancel/?if_unconfirmed=0")
    assert response.status_code == 200
    job.refresh_from_db()
    assert job.state == "cancelled"
    assert_ledger_invariants()
