"""The periodic sweep as Celery runs it: a beat entry, a task on the render queue."""

from datetime import timedelta

import pytest
from celery import current_app as app
from django.conf import settings
from django.utils import timezone

from ledger import services, tasks
from ledger.models import Hold

pytestmark = pytest.mark.django_db


def test_sweep_task_releases_stale_holds(user):
    account = services.account_for(user)
    services.grant(account=account, amount=2, key="seed", reason="x")
    hold = services.authorize(account=account, amount=2, key="h", reference="r")
    Hold.objects.filter(pk=hold.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert tasks.expire_stale_holds.apply().get() == 1
    account.refresh_from_db()
    assert (account.available, account.held) == (2, 0)


def test_beat_runs_the_sweep_every_hold_sweep_seconds():
    entry = settings.CELERY_BEAT_SCHEDULE["expire-stale-holds"]
    assert entry["task"] == tasks.expire_stale_holds.name
    assert entry["schedule"] == timedelta(seconds=settings.HOLD_SWEEP_SECONDS)
    assert app.conf.beat_schedule == settings.CELERY_BEAT_SCHEDULE


def test_celery_is_configured_for_redelivery():
    assert app.conf.task_acks_late is True
    assert app.conf.task_reject_on_worker_lost is True
    assert app.conf.worker_prefetch_multiplier == 1
    visibility = app.conf.broker_transport_options["visibility_timeout"]
    assert visibility > app.conf.task_time_limit
    route = app.amqp.router.route({}, tasks.expire_stale_holds.name)
    assert route["queue"].name == "render"
