"""Old declined speculations fold into daily counts; the admin figures stay the same."""

from datetime import timedelta

import pytest
from django.utils import timezone

from mangagen.storyboards import services as storyboards
from speculation import report
from speculation.models import DeclinedDaily, Outcome, Speculation
from speculation.retention import prune_declined

pytestmark = pytest.mark.django_db

AGES_IN_DAYS = [0.1, 2, 6.5, 29.5, 30.5, 45, 45.2, 100]


@pytest.fixture
def history(user):
    board = storyboards.create_storyboard(owner=user, title="t")
    now = timezone.now()
    for n, age in enumerate(AGES_IN_DAYS):
        reason = "capacity" if n % 2 else "insufficient_credits"
        spec = Speculation.objects.create(
            user=user, storyboard=board, version="v", outcome=Outcome.DECLINED, reason=reason
        )
        Speculation.objects.filter(pk=spec.pk).update(created_at=now - timedelta(days=age))
    return now


def figures(now):
    periods = [
        *report.report(now=now),
        report.period(label="Year", since=now - timedelta(days=365), until=now),
    ]
    return [(p.outcomes, p.declined) for p in periods]


def test_pruning_leaves_every_admin_figure_as_it_was(history):
    before = figures(history)
    pruned = prune_declined(before=history)  # asks for everything; keeps the widest period
    assert pruned == 3  # the rows 45, 45.2 and 100 days old
    assert Speculation.objects.count() == len(AGES_IN_DAYS) - 3
    assert sum(DeclinedDaily.objects.values_list("count", flat=True)) == 3
    assert figures(history) == before


def test_pruning_twice_counts_each_row_once(history):
    before = figures(history)
    prune_declined(before=history)
    assert prune_declined(before=history) == 0
    assert figures(history) == before


def test_rows_the_admin_can_still_see_are_never_pruned(history):
    prune_declined(before=history)
    kept = Speculation.objects.filter(created_at__gte=history - timedelta(days=31)).count()
    assert kept == 5 == Speculation.objects.count()
