"""Faults: a database that refuses the capture, beat down for a while, double clicks, a
bucket out of reach."""

from datetime import timedelta

import pytest
from django.db import OperationalError
from django.utils import timezone

from ledger import services as ledger
from ledger.models import Hold
from mangagen.jobs import dispatch, services, tasks
from mangagen.jobs.attempts import AttemptKind
from mangagen.jobs.kinds.panel import PANEL, Panel
from mangagen.jobs.models import Job
from mangagen.kernel import paid_render
from mangagen.kernel.storage_config import storages
from tests.support import factories
from tests.support.factories import balance
from tests.support.ledger_invariants import assert_ledger_invariants
from tests.support.s3 import ACCESS_KEY, SECRET_KEY
from tests.support.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("instant_renders")]


@pytest.fixture(autouse=True)
def no_deadline_tasks(monkeypatch):
    """A job's deadline task is dropped, not sent."""
    monkeypatch.setattr(dispatch, "send_expire", lambda args, eta: None)


def test_a_refused_capture_leaves_a_visible_hold_that_the_sweeps_resolve(user, run, monkeypatch):
    ledger.grant(account=ledger.account_for(user), amount=3, key="seed", reason="x")
    with run.commits():
        job, _ = services.generate(user=user, storyboard=factories.storyboard(user))
    original_capture = ledger.capture

    def database_down(**kwargs):
        raise OperationalError("the database refused the write")

    # The database is down for the capture and for the failure path after it.
    monkeypatch.setattr(ledger, "capture", database_down)
    monkeypatch.setattr(AttemptKind, "fail", lambda *args, **kwargs: database_down())
    (job_id, index, attempt), _ = run.take()
    with pytest.raises(OperationalError):
        tasks.render_panel.apply(args=(job_id, index, attempt)).get()
    panel = job.panels.get(index=1)
    assert panel.state == "rendering" and panel.hold.state == Hold.State.PENDING
    from ledger.selectors import reconciliation

    later = timezone.now() + timedelta(seconds=400)
    monkeypatch.setattr(ledger, "capture", original_capture)
    # The sweep notices the lost render and sends it again; it is delivered once.
    with run.commits():
        assert services.requeue_stuck_renders(now=later) == 1
    assert run.render() == "delivered"
    assert balance(user) == (2, 0)
    assert [m for m in reconciliation() if m.kind != "stale_hold"] == []
    assert_ledger_invariants()


def test_a_hold_left_by_a_crash_is_released_by_the_sweep(user, enqueued):
    ledger.grant(account=ledger.account_for(user), amount=3, key="seed", reason="x")
    job, _ = services.generate(user=user, storyboard=factories.storyboard(user))
    hold = job.panels.get(index=1).hold
    assert ledger.expire_stale_holds(now=hold.expires_at + timedelta(seconds=1)) == 1
    assert balance(user) == (3, 0)


def test_beat_down_for_a_while_is_caught_up_by_one_sweep(user, make_user, enqueued, settings):
    settings.SPECULATION_CONFIRM_SECONDS = 60
    people = [user, make_user(), make_user()]
    for n, person in enumerate(people):
        ledger.grant(account=ledger.account_for(person), amount=3, key=f"s{n}", reason="x")
    confirmed, _ = services.generate(user=people[0], storyboard=factories.storyboard(people[0]))
    unconfirmed = services.start_job(
        user=people[1],
        storyboard=factories.storyboard(people[1]),
        confirmed=False,
        confirm_by=timezone.now() + timedelta(seconds=60),
    )
    loose = ledger.authorize(
        account=ledger.account_for(people[2]), amount=1, key="loose", reference="r", expires_in=60
    )
    much_later = timezone.now() + timedelta(hours=3)  # beat was down; nothing ran meanwhile
    assert services.expire_due_jobs(now=much_later) == 2
    assert ledger.expire_stale_holds(now=much_later) == 1
    assert {j.state for j in Job.objects.filter(pk__in=[confirmed.pk, unconfirmed.pk])} == {
        "expired"
    }
    loose.refresh_from_db()
    assert loose.state == "expired"
    for person in people:
        assert balance(person) == (3, 0)
    assert services.expire_due_jobs(now=much_later) == 0  # idempotent


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_double_clicks_and_two_tabs_make_one_job(user, enqueued, race):
    ledger.grant(account=ledger.account_for(user), amount=5, key="seed", reason="x")
    board = factories.storyboard(user)
    results = race([lambda: services.generate(user=user, storyboard=board)[0].pk] * 8)
    assert len(results) == 8 and len(set(results)) == 1
    assert Job.objects.count() == 1
    assert balance(user) == (4, 1)


def test_a_render_whose_task_died_with_its_worker_before_starting_goes_again(
    user, run, enqueued, monkeypatch, settings
):
    ledger.grant(account=ledger.account_for(user), amount=3, key="seed", reason="x")
    with run.commits():
        job, _ = services.generate(user=user, storyboard=factories.storyboard(user))
    enqueued.clear()  # a worker took the message, and was killed before it started
    panel = job.panels.get(index=1)
    soon = panel.queued_at + timedelta(seconds=1)
    later = panel.queued_at + timedelta(seconds=settings.RENDER_HEARTBEAT_SECONDS * 3 + 1)

    # Messages wait in a queue: it may be among them, so nothing is sent yet.
    monkeypatch.setattr(dispatch, "waiting", lambda: {"render": 2, "speculative": 0})
    assert services.requeue_lost_renders(now=later) == 0
    monkeypatch.setattr(dispatch, "waiting", lambda: {"render": 0, "speculative": 0})
    assert services.requeue_lost_renders(now=soon) == 0  # not yet three beats
    with run.commits():
        assert services.requeue_lost_renders(now=later) == 1
    assert services.requeue_lost_renders(now=later) == 0  # sent once, not every sweep
    (job_id, index, attempt), queue = run.take()
    assert (job_id, index, attempt, queue) == (job.pk, 1, 1, "render")
    requeued = job.events.filter(type="panel.requeued").get()
    assert requeued.data["why"] == "never started"
    with run.commits():
        assert services.perform_render(job_id=job_id, index=index, attempt=attempt) == "delivered"
    assert balance(user) == (2, 0)


def test_a_render_that_finds_the_bucket_unreachable_goes_again_and_is_paid_once(
    user, run, s3_server, settings, monkeypatch
):
    """STORAGE_BACKEND=s3 through a network that drops the connection of the render's
    upload, past boto3's own retries (one attempt here; a few quick ones by default):
    the task goes again, as after a dropped database connection, instead of failing
    the panel; it is delivered and paid once."""
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")  # no retry of boto3's own
    bucket = s3_server.new_bucket()
    ledger.grant(account=ledger.account_for(user), amount=3, key="seed", reason="x")
    with run.commits():
        job, _ = services.generate(user=user, storyboard=factories.storyboard(user))
    ((job_id, index, attempt), _queue) = run.take()
    with TcpProxy(("127.0.0.1", s3_server.port), dropping=1) as network:
        settings.STORAGES = storages(
            backend="s3",
            bucket=bucket,
            endpoint_url=f"http://127.0.0.1:{network.port}",
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
        )
        with run.commits():
            outcome = tasks.render_panel.apply(args=(job_id, index, attempt)).get()
        assert network.dropped == 1, "the upload met the cut"
    assert outcome == "delivered"
    panel = job.panels.get(index=1)
    assert panel.state == "delivered" and panel.error == ""
    # The delivered render is in the bucket (beside the comic's kept copy); the upload
    # that was cut off left nothing.
    assert s3_server.keys(bucket, f"renders/{job.pk}/") == [panel.image.name]
    assert balance(user) == (2, 0)
    assert_ledger_invariants()


def test_a_render_slow_to_start_beating_is_not_taken_for_lost(user, run, monkeypatch, settings):
    """The sweep's clock starts when the panel says RENDERING: the render beats from that
    moment, so a worker slowed down between that commit and its wait (a loaded machine)
    is not taken for lost and sent again."""
    ledger.grant(account=ledger.account_for(user), amount=3, key="seed", reason="x")
    with run.commits():
        job, _ = services.generate(user=user, storyboard=factories.storyboard(user))
    (job_id, index, attempt), _queue = run.take()
    later = timezone.now() + timedelta(seconds=settings.RENDER_HEARTBEAT_SECONDS * 3 + 1)
    swept = []
    hold_no_connection = paid_render.hold_no_connection

    def slow_worker():
        # The first moment after the commit that marked the panel RENDERING.
        if not swept:
            swept.append(services.requeue_lost_renders(now=later))
        hold_no_connection()

    monkeypatch.setattr(paid_render, "hold_no_connection", slow_worker)
    with run.commits():
        assert services.perform_render(job_id=job_id, index=index, attempt=attempt) == "delivered"
    assert swept == [0]
    assert not job.events.filter(type="panel.requeued").exists()


def test_a_render_sent_again_while_it_still_ran_delivers_what_it_drew(
    user, run, monkeypatch, settings
):
    """A worker that missed its beats (starved, not dead) is sent again by the sweep; the
    render it finishes is the panel's, delivered and paid once, instead of being thrown
    away for the copy that has not started (which a loaded machine can repeat forever)."""
    from mangagen.jobs import liveness

    ledger.grant(account=ledger.account_for(user), amount=3, key="seed", reason="x")
    with run.commits():
        job, _ = services.generate(user=user, storyboard=factories.storyboard(user))
    (job_id, index, attempt), _queue = run.take()
    renderer = PANEL.renderer()
    later = timezone.now() + timedelta(seconds=settings.RENDER_HEARTBEAT_SECONDS * 3 + 1)

    class Starved:
        def __getattr__(self, name):
            return getattr(renderer, name)

        def render(self, spec, seed, **kwargs):
            # Its beats stop for a while (the key expires), and the sweep runs meanwhile.
            with pytest.MonkeyPatch.context() as silent:
                silent.setattr(liveness, "alive_many", lambda names: dict.fromkeys(names, False))
                silent.setattr(liveness, "alive", lambda name: False)
                assert services.requeue_lost_renders(now=later) == 1
            return renderer.render(spec, seed, **kwargs)

    monkeypatch.setattr(Panel, "renderer", lambda self: Starved())
    with run.commits():
        outcome = services.perform_render(job_id=job_id, index=index, attempt=attempt)
    assert outcome == "delivered"
    assert job.panels.get(index=1).state == "delivered"
    # The copy the sweep sent finds the panel done and does nothing.
    sent = run.queued
    assert sent.count((job_id, index, attempt)) == 1
    assert services.perform_render(job_id=job_id, index=index, attempt=attempt) == "stale"
    assert balance(user) == (2, 0)
