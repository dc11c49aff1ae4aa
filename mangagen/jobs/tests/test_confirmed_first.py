"""Confirmed work first, through the studio: a speculative render waiting for a container
becomes confirmed work the moment its person clicks Generate (one hold, charged once)."""

import threading
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from ledger import services as ledger
from mangagen.jobs import liveness, services
from mangagen.jobs.models import Job
from mangagen.renderers.gpu_pool import GpuPool, Priority
from tests.support import factories
from tests.support.factories import balance
from tests.support.ledger_invariants import assert_ledger_invariants
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def one_container(instant_renders, enqueued, settings):
    settings.GPU_POOL_SIZE = 1


def render(job, results):
    """Panel one's render, as a worker thread runs it (with a connection of its own)."""
    try:
        results.append(services.perform_render(job_id=job.pk, index=1, attempt=1))
    finally:
        connections.close_all()


def test_generate_promotes_a_waiting_speculative_render_to_confirmed_work(user, enqueued):
    ledger.grant(account=ledger.account_for(user), amount=3, key="seed", reason="x")
    board = factories.storyboard(user, title="Promoted", panels=[{"description": "One."}])
    job = services.start_job(
        user=user,
        storyboard=board,
        confirmed=False,
        confirm_by=timezone.now() + timedelta(minutes=10),
    )
    pool = GpuPool()
    busy = pool.try_acquire(ticket="someone-else", priority=Priority.CONFIRMED)
    assert busy is not None  # the only container is taken
    results = []
    worker = threading.Thread(target=render, args=(job, results))
    worker.start()
    wait_for(
        lambda: pool.state().waiting_speculative == 1,
        every=0.01,
        what="the render waiting as speculation",
    )
    assert liveness.alive(liveness.ticket(job.pk, 1, 1))

    attached, how = services.generate(user=user, storyboard=board)
    assert (attached.pk, how) == (job.pk, "attached")
    wait_for(
        lambda: (pool.state().waiting_confirmed, pool.state().waiting_speculative) == (1, 0),
        every=0.01,
        what="the render promoted to confirmed work",
    )
    assert [queue for _, queue in enqueued] == ["speculative"]  # no second copy: it had started

    pool.release(busy)
    worker.join(timeout=30)
    assert results == ["delivered"]
    job = Job.objects.get(pk=job.pk)
    panel = job.panels.get(index=1)
    assert panel.state == "delivered" and panel.attempts == 1
    assert balance(user) == (2, 0)  # charged once
    assert_ledger_invariants()


def test_a_render_whose_job_ends_while_it_waits_leaves_the_queue(user):
    ledger.grant(account=ledger.account_for(user), amount=3, key="seed", reason="x")
    board = factories.storyboard(user, title="Left", panels=[{"description": "One."}])
    job = services.start_job(user=user, storyboard=board)
    pool = GpuPool()
    busy = pool.try_acquire(ticket="someone-else", priority=Priority.CONFIRMED)
    results = []
    worker = threading.Thread(target=render, args=(job, results))
    worker.start()
    wait_for(lambda: pool.state().waiting_confirmed == 1, every=0.01, what="the render waiting")
    services.cancel_job(job=job)
    worker.join(timeout=30)
    assert results == ["withdrawn"]
    assert pool.state().waiting_confirmed == 0
    pool.release(busy)
    assert_ledger_invariants()
