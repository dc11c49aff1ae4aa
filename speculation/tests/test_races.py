"""Races on PostgreSQL: two Review tabs of one person, one credit."""

import pytest

from ledger import services as ledger
from mangagen.jobs import services as jobs
from mangagen.jobs.models import LIVE_STATES, Job
from mangagen.storyboards import services as storyboards
from speculation import services
from speculation.models import Outcome, Speculation
from tests.support.concurrency import meanwhile
from tests.support.ledger_invariants import assert_ledger_invariants

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_two_tabs_racing_for_the_last_credit_leave_one_hint(user, race, enqueued):
    ledger.grant(account=ledger.account_for(user), amount=1, key="last", reason="x")
    boards = []
    for title in ("Tab one", "Tab two"):
        board = storyboards.create_storyboard(owner=user, title=title)
        boards.append(
            storyboards.update_storyboard(storyboard=board, panels=[{"description": "x"}])
        )
    for _ in range(5):
        results = race([lambda b=b: services.speculate(user=user, storyboard=b) for b in boards])
        assert all(isinstance(r, Speculation) for r in results), results
        live = Job.objects.filter(confirmed=False, state__in=LIVE_STATES)
        assert live.count() == 1
        assert Speculation.objects.filter(outcome=Outcome.LIVE).count() == 1
        account = ledger.account_for(user)
        assert (account.available, account.held) == (0, 1)
    assert_ledger_invariants()


def test_two_tabs_on_one_storyboard_share_one_job(user, race, enqueued):
    ledger.grant(account=ledger.account_for(user), amount=3, key="some", reason="x")
    board = storyboards.create_storyboard(owner=user, title="Same")
    board = storyboards.update_storyboard(storyboard=board, panels=[{"description": "x"}])
    results = race([lambda: services.speculate(user=user, storyboard=board)] * 4)
    assert len({r.job_id for r in results}) == 1
    assert ledger.account_for(user).held == 1


def comic(user, title):
    made = storyboards.create_storyboard(owner=user, title=title)
    return storyboards.update_storyboard(storyboard=made, panels=[{"description": "x"}])


def test_a_newer_speculation_never_cancels_an_older_one_its_tab_just_confirmed(user, enqueued):
    """Tab one clicks Generate between tab two's read of the older speculation and its
    locks (the comics' rows come first, then its job's)."""
    ledger.grant(account=ledger.account_for(user), amount=3, key="some", reason="x")
    first, second = comic(user, "Tab one"), comic(user, "Tab two")
    older = services.speculate(user=user, storyboard=first)
    assert older.job_id
    with meanwhile(
        lambda: jobs.generate(user=user, storyboard=first), table="mangagen_storyboard"
    ) as other:
        newer = services.speculate(user=user, storyboard=second)
    job, how = other[0]
    assert (job.pk, how) == (older.job_id, "attached")
    job.refresh_from_db()
    assert job.confirmed and job.live
    older.refresh_from_db()
    assert older.outcome == Outcome.HIT
    assert newer.job_id and newer.outcome == Outcome.LIVE
    assert_ledger_invariants()
