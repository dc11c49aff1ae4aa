"""Jobs on a real Celery worker (not eager), PostgreSQL and Redis.

Each test starts a worker process against the test database, drives the job
through the services as the web process would, and watches the database.
"""

import base64
import io
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import psutil
import pytest
from django.conf import settings as django_settings
from django.utils import timezone
from PIL import Image

from ledger import services as ledger
from mangagen.jobs import liveness, services
from mangagen.jobs.events import EventType
from mangagen.jobs.models import Job
from tests.support.factories import balance
from tests.support.ledger_invariants import assert_ledger_invariants
from tests.support.standin import Canned
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def start_worker(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    started = []

    def start(**env_overrides):
        db = django_settings.DATABASES["default"]
        url = (
            f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        )
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "MEDIA_ROOT": str(tmp_path / "media"),
            "RENDER_COLD_START_SECONDS": "0",
            "RENDER_SECONDS": "0.2",
            "RENDER_WIDTH": "160",
            "RENDER_HEIGHT": "120",
            "SPECULATION_LOOKAHEAD": "0",
            "PYTHONUNBUFFERED": "1",
            "GPU_POOL_PREFIX": settings.GPU_POOL_PREFIX,
            "RENDER_HEARTBEAT_SECONDS": str(settings.RENDER_HEARTBEAT_SECONDS),
            **env_overrides,
        }
        log = open(tmp_path / f"worker-{len(started)}.log", "w")  # noqa: SIM115
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "mangagen", "worker", "-Q", "render,speculative",
             "-c", env.get("WORKER_CONCURRENCY", "8"), "-P", env.get("WORKER_POOL", "threads"),
             "--without-gossip", "--without-mingle",
             "--without-heartbeat", "-n", f"test{len(started)}@%h", "--loglevel", "INFO"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        started.append((process, log))
        worker_log = tmp_path / f"worker-{len(started) - 1}.log"
        wait_for(lambda: "ready." in worker_log.read_text(), every=0.2, what="the worker to start")
        return process

    from mangagen.celery import app

    app.control.purge()
    yield start
    for process, log in started:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=15)
        except ProcessLookupError:
            pass  # a test killed it already
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        log.close()


def panel_state(job, index):
    return job.panels.get(index=index).state


def test_a_full_job_from_generate_to_completed(start_worker, user, board, account):
    start_worker()
    job, _ = services.generate(user=user, storyboard=board)
    wait_for(lambda: panel_state(job, 1) == "delivered", what="panel 1")
    assert balance(account) == (9, 0)
    services.approve_panel(job=job, index=1)
    wait_for(lambda: panel_state(job, 2) == "delivered", what="panel 2")
    services.redo_panel(job=job, index=2)
    wait_for(lambda: job.panels.get(index=2).attempts == 2 and panel_state(job, 2) == "delivered")
    services.approve_panel(job=job, index=2)
    job.refresh_from_db()
    assert job.state == "completed"
    assert balance(account) == (7, 0)  # three renders shown, three credits
    assert_ledger_invariants()


def test_cancel_mid_render_charges_nothing(start_worker, user, board, account):
    start_worker(RENDER_SECONDS="2")
    job, _ = services.generate(user=user, storyboard=board)
    wait_for(lambda: panel_state(job, 1) == "rendering", what="the render to start")
    services.cancel_job(job=job)
    assert balance(account) == (10, 0)
    wait_for(
        lambda: job.events.filter(type=EventType.PANEL_DISCARDED).exists(),
        what="the render to finish and be discarded",
    )
    panel = job.panels.get(index=1)
    assert panel.state == "rendering" and not panel.image
    assert balance(account) == (10, 0)
    assert_ledger_invariants()


def test_a_worker_killed_mid_render_is_redelivered_and_charged_once(
    start_worker, user, board, account
):
    worker = start_worker(RENDER_SECONDS="3", WORKER_POOL="prefork", WORKER_CONCURRENCY="1")
    job, _ = services.generate(user=user, storyboard=board)
    wait_for(lambda: panel_state(job, 1) == "rendering", what="the render to start")
    children = psutil.Process(worker.pid).children()
    assert children, "the prefork pool has a child"
    for child in children:
        child.send_signal(signal.SIGKILL)
    wait_for(lambda: panel_state(job, 1) == "delivered", timeout=40, what="redelivery")
    assert job.panels.get(index=1).attempts == 1
    assert balance(account) == (9, 0)
    rendering = job.events.filter(type="panel.rendering").count()
    assert rendering == 2  # started twice, delivered once
    assert job.events.filter(type="panel.delivered").count() == 1
    assert ledger.expire_stale_holds(now=timezone.now() + timedelta(days=1)) == 0
    assert_ledger_invariants()


def png() -> str:
    buffer = io.BytesIO()
    Image.new("L", (40, 30), 128).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def test_a_failing_renderer_is_retried_then_fails_cleanly(
    start_worker, user, board, account, standin
):
    standin.reply(
        Canned(status=503, body={"error": "busy"}),
        Canned(body={"data": [{"b64_json": png()}]}),
    )
    start_worker(RENDERER="openai", IMAGES_BASE_URL=standin.url, RENDER_HTTP_RETRIES="0")
    job, _ = services.generate(user=user, storyboard=board)
    wait_for(lambda: panel_state(job, 1) == "delivered", what="delivery after a retry")
    assert job.events.filter(type="panel.retrying").count() == 1
    assert balance(account) == (9, 0)

    standin.reply(*[Canned(status=500, body={})] * 5)
    services.approve_panel(job=job, index=1)
    wait_for(lambda: panel_state(job, 2) == "failed", timeout=40, what="the final failure")
    job = Job.objects.get(pk=job.pk)
    assert job.state == "awaiting_decision"
    assert balance(account) == (9, 0)  # the failed render's hold was released
    assert_ledger_invariants()


def test_a_lost_worker_node_is_caught_by_the_sweep(start_worker, user, board, account, settings):
    settings.RENDER_HEARTBEAT_SECONDS = 0.5
    lost = start_worker(RENDER_SECONDS="3")
    job, _ = services.generate(user=user, storyboard=board)
    wait_for(lambda: panel_state(job, 1) == "rendering", what="the render to start")
    ticket = liveness.ticket(job.pk, 1, 1)
    wait_for(lambda: liveness.alive(ticket), what="its heartbeat")
    later = timezone.now() + timedelta(seconds=django_settings.RENDER_STUCK_SECONDS + 1)
    assert services.requeue_stuck_renders(now=later) == 0, "still beating: slow, not stuck"
    os.killpg(lost.pid, signal.SIGKILL)  # the whole node: main process and pool
    lost.wait(timeout=10)
    wait_for(lambda: not liveness.alive(ticket), what="the lost render's last beat to lapse")
    start_worker(RENDER_SECONDS="0.2")
    assert services.requeue_stuck_renders(now=later) == 1
    wait_for(lambda: panel_state(job, 1) == "delivered", what="the requeued render")
    assert balance(account) == (9, 0)
    assert job.events.filter(type="panel.delivered").count() == 1
    assert ledger.expire_stale_holds(now=later + timedelta(days=1)) == 0  # nothing left pending
    assert_ledger_invariants()


def test_a_worker_killed_whole_mid_render_is_sent_again_within_seconds(
    start_worker, user, board, account, settings
):
    """Parent and pool SIGKILLed: no one acks, no one rejects. Its render stops beating,
    and the sweep sends it again within three beats, same attempt and hold, charged once."""
    settings.RENDER_HEARTBEAT_SECONDS = 0.5
    lost = start_worker(RENDER_SECONDS="3")
    job, _ = services.generate(user=user, storyboard=board)
    wait_for(lambda: panel_state(job, 1) == "rendering", what="the render to start")
    wait_for(lambda: liveness.alive(liveness.ticket(job.pk, 1, 1)), what="its heartbeat")
    assert services.requeue_lost_renders() == 0  # alive: left alone
    os.killpg(lost.pid, signal.SIGKILL)  # the whole node: main process and its threads
    lost.wait(timeout=10)
    killed = time.monotonic()
    start_worker(RENDER_SECONDS="0.2")
    wait_for(lambda: services.requeue_lost_renders() == 1, what="the sweep to requeue it")
    # It should have finished about 3 s after the kill; it is sent again well within 30 s.
    assert time.monotonic() - killed < 3 + 30
    wait_for(lambda: panel_state(job, 1) == "delivered", what="the requeued render")
    panel = job.panels.get(index=1)
    assert panel.attempts == 1
    assert balance(account) == (9, 0)
    assert job.events.filter(type="panel.requeued").count() == 1
    assert job.events.filter(type="panel.delivered").count() == 1
    assert ledger.expire_stale_holds(now=timezone.now() + timedelta(days=1)) == 0
    assert_ledger_invariants()
