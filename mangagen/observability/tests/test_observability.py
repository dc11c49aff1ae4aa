"""Operating it, in one process: /metrics and its access, the probes, request ids, what is
counted (renders, render phases, speculation, the ledger) and the JSON log format.

What needs real processes (the sums over processes, a probe of a process whose
Redis is away, request ids through Celery) is in tests/stack/test_operations.py.
"""

import json
import logging
import os
import re
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import psycopg
import pytest
from django.db import connection
from prometheus_client import REGISTRY, CollectorRegistry, multiprocess

from ledger import errors as ledger_errors
from ledger import metrics as ledger_metrics
from ledger import services as ledger
from mangagen.jobs import services as jobs
from mangagen.jobs import tasks
from mangagen.observability import logs, metrics
from mangagen.observability.exposition import exposition
from tests.support.factories import funded_account, storyboard
from tests.support.pages import PANELS, page_png
from tests.support.stack import free_port
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]

CONTRACT_FAMILIES = [
    "mangagen_renders_total",
    "mangagen_render_seconds",
    "mangagen_speculation_total",
    "mangagen_speculation_outcomes_total",
    "mangagen_gpu_pool_containers",
    "mangagen_queue_depth",
    "ledger_holds_open",
    "ledger_operations_total",
]


def sample(name: str, **labels) -> float:
    ledger_metrics.flush()  # the ledger's counts reach the counter in batches, as at a scrape
    return REGISTRY.get_sample_value(name, labels) or 0.0


# --- /metrics and who may read it ------------------------------------------------------------


def test_metrics_answer_the_token_and_staff_only(client, make_user, settings):
    settings.METRICS_TOKEN = "scrape-secret-1234"
    anonymous = client.get("/metrics")
    assert anonymous.status_code == 401
    assert anonymous.json()["error"] == "not_authenticated"
    assert anonymous["WWW-Authenticate"].startswith("Bearer")
    wrong = client.get("/metrics", headers={"Authorization": "Bearer not-the-token"})
    assert wrong.status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Basic eDp5"}).status_code == 401
    scraped = client.get("/metrics", headers={"Authorization": "Bearer scrape-secret-1234"})
    assert scraped.status_code == 200
    assert scraped["Content-Type"].startswith("text/plain")

    client.force_login(make_user())
    refused = client.get("/metrics")
    assert refused.status_code == 403
    assert refused.json()["error"] == "permission_denied"
    client.force_login(make_user(is_staff=True))
    assert client.get("/metrics").status_code == 200


@pytest.mark.parametrize(
    "address, secure, answered",
    [
        ("127.0.0.1", False, 200),  # a scraper beside it
        ("10.4.5.6", False, 200),  # inside the network
        ("fd00::7", False, 200),
        ("203.0.113.9", False, 403),  # the public host over plain HTTP: its token in clear
        ("2001:db8::1", False, 403),
        ("203.0.113.9", True, 200),  # over HTTPS, from anywhere
    ],
)
def test_metrics_over_plain_http_only_from_the_network_while_https_is_redirected(
    client, settings, address, secure, answered
):
    settings.METRICS_TOKEN = "scrape-secret-1234"
    settings.SECURE_SSL_REDIRECT = True
    scraped = client.get(
        "/metrics",
        headers={"Authorization": "Bearer scrape-secret-1234"},
        REMOTE_ADDR=address,
        secure=secure,
    )
    assert scraped.status_code == answered
    if answered == 403:
        assert scraped.json()["error"] == "permission_denied"
        assert "METRICS_PLAIN_HTTP_NETWORKS" in scraped.json()["detail"]


def test_the_networks_allowed_plain_http_are_a_setting(client, settings):
    settings.METRICS_TOKEN = "scrape-secret-1234"
    settings.SECURE_SSL_REDIRECT = True
    settings.METRICS_PLAIN_HTTP_NETWORKS = ["198.51.100.0/24"]
    bearer = {"Authorization": "Bearer scrape-secret-1234"}
    assert client.get("/metrics", headers=bearer, REMOTE_ADDR="198.51.100.7").status_code == 200
    assert client.get("/metrics", headers=bearer, REMOTE_ADDR="10.0.0.1").status_code == 403
    settings.SECURE_SSL_REDIRECT = False  # no HTTPS anywhere (a laptop): plain HTTP it is
    assert client.get("/metrics", headers=bearer, REMOTE_ADDR="10.0.0.1").status_code == 200


def test_no_token_set_means_staff_only(client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics", headers={"Authorization": "Bearer "}).status_code == 401


def test_the_exposition_has_every_family_of_the_contract():
    text = exposition().decode()
    for family in CONTRACT_FAMILIES:
        assert f"# TYPE {family.removesuffix('_total')} " in text or f"# TYPE {family} " in text
    for outcome in ("delivered", "failed", "withdrawn", "cancelled_at_provider"):
        assert f'mangagen_renders_total{{outcome="{outcome}"}}' in text
    for phase in ("queued", "cold_start", "render"):
        assert f'mangagen_render_seconds_count{{phase="{phase}"}}' in text
    for outcome in ("attached", "abandoned"):
        assert f'mangagen_speculation_outcomes_total{{outcome="{outcome}"}}' in text
    assert 'mangagen_metrics_source_up{source="database"} 1.0' in text
    assert 'mangagen_metrics_source_up{source="redis"} 1.0' in text


def test_a_source_that_does_not_answer_leaves_its_gauges_out(settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    text = exposition().decode()
    assert 'mangagen_metrics_source_up{source="redis"} 0.0' in text
    assert "mangagen_queue_depth{" not in text
    assert "ledger_holds_open " in text  # the database still answers


def test_open_holds_are_read_at_scrape_time(user):
    account = funded_account(user, 3)
    ledger.authorize(account=account, amount=2, key="open-1", reference="r")
    text = exposition().decode()
    assert "ledger_holds_open 1.0" in text
    assert "ledger_holds_open_credits 2.0" in text


# --- the probes ------------------------------------------------------------------------------


def test_probes_need_no_session_and_ignore_the_host_check(client, settings):
    settings.ALLOWED_HOSTS = ["mangagen.example"]
    settings.SECURE_SSL_REDIRECT = True
    # As Kubernetes asks: by the pod's address, over plain HTTP.
    assert client.get("/healthz", HTTP_HOST="10.1.2.3:8000").json() == {"status": "ok"}
    ready = client.get("/readyz", HTTP_HOST="10.1.2.3:8000")
    assert ready.status_code == 200 and ready.json() == {"status": "ok"}


def test_readyz_names_redis_when_it_does_not_answer(client, settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    ready = client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json() == {"failed": ["redis"]}


# --- request ids -----------------------------------------------------------------------------


def test_a_request_id_is_returned_kept_when_a_uuid_and_replaced_otherwise(client):
    made = client.get("/accounts/login/")["X-Request-ID"]
    assert len(made) == 32 and made != client.get("/accounts/login/")["X-Request-ID"]
    given = str(uuid.uuid4())
    assert client.get("/accounts/login/", headers={"X-Request-ID": given})["X-Request-ID"] == given
    hostile = "x\r\nSet-Cookie: a=b" + "y" * 500
    answered = client.get("/accounts/login/", headers={"X-Request-ID": hostile})["X-Request-ID"]
    assert answered != hostile and len(answered) == 32


def test_json_log_lines_carry_the_request_id_the_job_and_the_panel(capsys, settings):
    config = logs.logging_config(level="INFO", json=True)
    handler = logging.StreamHandler()
    handler.addFilter(logs.ContextFilter())
    formatter_config = dict(config["formatters"]["default"])
    formatter_class = formatter_config.pop("()")
    module, _, name = formatter_class.rpartition(".")
    handler.setFormatter(getattr(__import__(module, fromlist=[name]), name)(**formatter_config))
    logger = logging.getLogger("test.observability")
    logger.addHandler(handler)
    try:
        from django_guid import set_guid

        set_guid("0f0e0d0c0b0a09080706050403020100")
        with logs.about(job=12, panel=3):
            logger.warning("the render went again")
    finally:
        logger.removeHandler(handler)
        from django_guid import clear_guid

        clear_guid()
    line = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert line["message"] == "the render went again"
    assert line["level"] == "WARNING" and line["logger"] == "test.observability"
    assert line["request_id"] == "0f0e0d0c0b0a09080706050403020100"
    assert (line["job"], line["panel"]) == (12, 3)
    assert line["time"].startswith("20")


def celery_says(handler: logging.Handler, task: str, answer: object) -> None:
    """What beat and a worker log for one run of `task`, through Celery's own words."""
    import celery.app.trace as trace

    loggers = [logging.getLogger(n) for n in ("celery.beat", "celery.worker.strategy")]
    loggers.append(trace.logger)
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    try:
        loggers[0].info(logs.BEAT_SENDS, task.rsplit(".", 1)[-1], task)
        received = {"id": "t-1", "name": task, "args": "()", "kwargs": "{}", "eta": None}
        loggers[1].info(trace.LOG_RECEIVED, received, extra={"data": received})
        trace.info(
            trace.LOG_SUCCESS,
            {"id": "t-1", "name": task, "return_value": repr(answer), "runtime": 0.01,
             "args": "()", "kwargs": "{}"},
        )  # fmt: skip
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
            logger.setLevel(logging.NOTSET)


def test_a_text_terminal_hears_housekeeping_only_when_it_did_something(settings):
    housekeeping = [entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()]
    config = logs.logging_config(level="INFO", json=False, housekeeping=housekeeping)
    assert config["handlers"]["console"]["filters"] == ["context", "housekeeping"]
    spec = dict(config["filters"]["housekeeping"])
    assert spec.pop("()") == "mangagen.observability.logs.QuietHousekeeping"
    seen: list[str] = []
    handler = logging.Handler()
    handler.addFilter(logs.QuietHousekeeping(**spec))
    handler.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]

    for task, answer in (
        ("mangagen.jobs.tasks.requeue_lost_renders", 0),
        ("mangagen.jobs.tasks.sweep_jobs", {"expired": 0, "requeued": 0}),
        ("ledger.tasks.expire_stale_holds", 0),
        ("mangagen.tasks.prune", {"jobs": 0, "files": 0}),
    ):
        celery_says(handler, task, answer)
    assert seen == []  # found nothing: not a line

    celery_says(handler, "mangagen.jobs.tasks.sweep_jobs", {"expired": 0, "requeued": 2})
    assert len(seen) == 1 and "succeeded" in seen[0] and "'requeued': 2" in seen[0]
    celery_says(handler, "mangagen.jobs.tasks.render_panel", "delivered")  # not housekeeping
    assert len(seen) == 4 and "Sending due task" in seen[1] and "received" in seen[2]
    seen.clear()
    failed = logging.LogRecord(
        "celery.app.trace", logging.ERROR, __file__, 1, "Task %(name)s[%(id)s] raised: %(exc)s",
        ({"name": "ledger.tasks.expire_stale_holds", "id": "t-2", "exc": "boom"},), None,
    )  # fmt: skip
    failed.data = failed.args  # type: ignore[attr-defined]  # (a lone dict is the args)
    handler.handle(failed)
    assert seen == ["Task ledger.tasks.expire_stale_holds[t-2] raised: boom"]


def test_json_logs_keep_every_housekeeping_line():
    config = logs.logging_config(level="INFO", json=True, housekeeping=["ledger.tasks.x"])
    assert "housekeeping" not in config["filters"]
    assert config["handlers"]["console"]["filters"] == ["context"]


def test_beat_still_says_what_the_quiet_filter_listens_for():
    import inspect

    import celery.beat

    assert f"info({logs.BEAT_SENDS!r}, entry.name, entry.task)" in inspect.getsource(celery.beat)


# --- what is counted -------------------------------------------------------------------------


def test_a_render_task_counts_its_outcome_and_phases(
    user, run, instant_renders, django_capture_on_commit_callbacks
):
    funded_account(user)
    with django_capture_on_commit_callbacks(execute=True):
        jobs.generate(user=user, storyboard=storyboard(user))
    delivered = sample("mangagen_renders_total", outcome="delivered")
    rendered = sample("mangagen_render_seconds_count", phase="render")
    (args, _queue) = run.take()
    assert tasks.render_panel.apply(args=args).get() == "delivered"
    assert sample("mangagen_renders_total", outcome="delivered") == delivered + 1
    assert sample("mangagen_render_seconds_count", phase="render") == rendered + 1


def test_phases_come_from_the_renderer_or_from_the_procedural_one():
    given = {"phases": {"queued": 1.5, "cold_start": 20.0, "render": 2.0, "upload": 1.0}}
    assert metrics.phases_of(given, 24.5) == {
        "queued": 1.5,
        "cold_start": 20.0,
        "render": 2.0,
        "upload": 1.0,
    }
    procedural = {"queued_seconds": 1.0, "cold_start_seconds": 4.0}
    assert metrics.phases_of(procedural, 7.5) == {"queued": 1.0, "cold_start": 4.0, "render": 2.5}
    assert metrics.phases_of({}, 3.0) == {"render": 3.0}


def test_ledger_operations_count_when_committed_and_refusals_by_code(
    user, django_capture_on_commit_callbacks
):
    account = funded_account(user, 1)
    placed = sample("ledger_operations_total", op="authorize", result="ok")
    refused = sample("ledger_operations_total", op="authorize", result="insufficient_credits")
    with django_capture_on_commit_callbacks(execute=True):
        hold = ledger.authorize(account=account, amount=1, key="k-1", reference="r")
    with pytest.raises(ledger_errors.InsufficientCredits):
        ledger.authorize(account=account, amount=1, key="k-2", reference="r")
    assert sample("ledger_operations_total", op="authorize", result="ok") == placed + 1
    assert (
        sample("ledger_operations_total", op="authorize", result="insufficient_credits")
        == refused + 1
    )
    captured = sample("ledger_operations_total", op="capture", result="ok")
    with django_capture_on_commit_callbacks(execute=False) as pending:
        ledger.capture(hold=hold, key="k-1:capture")
    assert sample("ledger_operations_total", op="capture", result="ok") == captured  # not yet
    for committed in pending:
        committed()
    assert sample("ledger_operations_total", op="capture", result="ok") == captured + 1


def test_the_ledgers_log_line_is_written_off_the_calling_thread_in_the_calls_context(
    user, django_capture_on_commit_callbacks
):
    """The line is made, formatted and written by the ledger's flushing thread, never
    the thread that waits on the database, yet with the request id, the job and the
    time of the call that made it."""
    from django_guid import clear_guid, set_guid

    account = funded_account(user, 1)
    seen: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.addFilter(logs.ContextFilter())
    handler.emit = seen.append  # type: ignore[method-assign]
    ledger_logger = logging.getLogger("ledger")
    level = ledger_logger.level
    ledger_logger.setLevel(logging.INFO)
    ledger_logger.addHandler(handler)
    try:
        set_guid("1f0e0d0c0b0a09080706050403020100")
        before = time.time()
        with logs.about(job=41), django_capture_on_commit_callbacks(execute=True):
            hold = ledger.authorize(account=account, amount=1, key="k-line", reference="r")
        after = time.time()
        clear_guid()
        hold.state = "changed by its caller"  # after the call: the line says what it did
        line = wait_for(
            lambda: [r for r in seen if f"hold #{hold.pk} " in r.getMessage()],
            what="the authorize's line, from the flushing thread",
        )[0]
    finally:
        ledger_logger.removeHandler(handler)
        ledger_logger.setLevel(level)
        clear_guid()
    assert line.thread != threading.get_ident() and line.threadName == "ledger-metrics"
    assert line.getMessage() == (
        f"ledger authorize: hold #{hold.pk} of account #{account.pk} (r): pending, 1 credit(s)"
    )
    assert line.request_id == "1f0e0d0c0b0a09080706050403020100"  # type: ignore[attr-defined]
    assert line.job == 41  # type: ignore[attr-defined]
    assert before <= line.created <= after


def test_no_ledger_line_is_made_when_its_level_is_off(
    user, django_capture_on_commit_callbacks, monkeypatch
):
    ledger_logger = logging.getLogger("ledger")
    level = ledger_logger.level
    account = funded_account(user, 1)
    authorized = sample("ledger_operations_total", op="authorize", result="ok")
    made: list[str] = []
    monkeypatch.setattr(ledger_metrics, "_fields", lambda result: made.append("made") or ())
    ledger_logger.setLevel(logging.WARNING)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            ledger.authorize(account=account, amount=1, key="k-quiet", reference="r")
    finally:
        ledger_logger.setLevel(level)
    assert sample("ledger_operations_total", op="authorize", result="ok") == authorized + 1
    assert made == []


def test_the_ledgers_counts_reach_the_files_before_its_process_exits(tmp_path):
    """Multiprocess mode: a process that counted and exited at once (its flushing
    thread never woke) left its counts in its files, summed as a scrape sums them."""
    shared = tmp_path / "metrics"
    shared.mkdir()
    script = (
        "import django; django.setup()\n"
        "from ledger import metrics\n"
        "metrics.count_expired(3)\n"
        "metrics.count_expired(4)\n"
    )
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(shared)}
    env.setdefault("DJANGO_SETTINGS_MODULE", "mangagen.settings_test")
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, check=True, timeout=60)
    summed = CollectorRegistry()
    multiprocess.MultiProcessCollector(summed, path=str(shared))
    assert summed.get_sample_value("ledger_operations_total", {"op": "expire", "result": "ok"}) == 7


def test_drawing_for_people_counts_its_cpu_and_a_refusal_counts_its_limit(
    account, user, client, run, instant_renders, settings
):
    board = storyboard(user, panels=PANELS)
    run.finish(run.generate(user, board))
    client.force_login(user)
    drawn = sample("mangagen_drawing_cpu_seconds_total")
    refused = sample("mangagen_limit_refusals_total", limit="drawing_budget")
    page_png(client, board.pk)  # drawn now, on this request's thread
    assert sample("mangagen_drawing_cpu_seconds_total") > drawn
    # None left, whichever minute the export falls in (a budget spent by the page above
    # would be new again if the minute turned in between).
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = 0
    answer = client.get(f"/api/storyboards/{board.pk}/export/?format=pdf")
    assert answer.status_code == 429 and answer.json()["error"] == "drawing_budget"
    assert sample("mangagen_limit_refusals_total", limit="drawing_budget") == refused + 1
    text = exposition().decode()
    for limit in ("too_many_storyboards", "too_many_live_jobs", "draft_quota"):
        assert f'mangagen_limit_refusals_total{{limit="{limit}"}}' in text


# --- a dropped database connection -----------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_render_whose_database_connection_was_dropped_goes_again_and_is_paid_once(
    user, run, instant_renders
):
    account = funded_account(user, 3)
    job, _ = jobs.generate(user=user, storyboard=storyboard(user))
    (args, _queue) = run.take()
    connection.ensure_connection()
    backend = connection.connection.info.backend_pid
    settings_dict = connection.settings_dict
    with psycopg.connect(
        dbname=settings_dict["NAME"],
        user=settings_dict["USER"],
        host=settings_dict["HOST"],
        port=settings_dict["PORT"] or 5432,
        password=settings_dict["PASSWORD"] or None,
        autocommit=True,
    ) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [backend])  # as a failover does
    retried = sample(
        "mangagen_celery_tasks_total", task="mangagen.jobs.tasks.render_panel", outcome="retried"
    )
    tasks.render_panel.apply(args=args)  # meets the dead connection, and goes again
    assert (
        sample(
            "mangagen_celery_tasks_total",
            task="mangagen.jobs.tasks.render_panel",
            outcome="retried",
        )
        == retried + 1
    )
    panel = job.panels.get(index=1)
    assert panel.state == "delivered"
    account.refresh_from_db()
    assert (account.available, account.held) == (2, 0)


# --- the Grafana dashboard ---------------------------------------------------------------------


def exposed_series(text: str) -> set[str]:
    """Every series name the exposition can have: each family's, and a histogram's parts."""
    names = set()
    for name, kind in re.findall(r"^# TYPE (\S+) (\S+)$", text, flags=re.MULTILINE):
        names |= (
            {f"{name}_bucket", f"{name}_count", f"{name}_sum"} if kind == "histogram" else {name}
        )
    return names


def test_the_dashboard_reads_only_metrics_that_exist(client):
    client.get("/accounts/login/")  # the HTTP families exist once a request was measured
    exposed = exposed_series(exposition().decode())
    dashboard = json.loads((ROOT / "docs" / "grafana" / "mangagen.json").read_text())
    used = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"\b((?:mangagen|ledger|django)_[a-z0-9_]+)", target["expr"])
    }
    assert len(used) >= 15
    assert sorted(used - exposed) == []
    # Every family of the contract is on it.
    for family in CONTRACT_FAMILIES:
        assert any(name.startswith(family.removesuffix("_total")) for name in used), family
