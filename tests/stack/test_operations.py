"""Operating it, on real processes: the probes of a web process whose Redis or migrations
are missing, a web process after its database connections were killed, and on the whole
stack: /metrics summed over the processes, a request id from the click to the capture,
and each fault of normal life (a worker killed mid-render, Redis dropping its clients,
the database dropping its connections) recovered with nothing lost and nothing charged
twice.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import requests

from tests.support.faults import drop_database_connections, drop_redis_clients, kill
from tests.support.redis_server import start_redis
from tests.support.stack import ROOT, Stack, free_port, fresh_database_url, stack
from tests.support.waiting import wait_for

pytestmark = pytest.mark.postgres

PASSWORD = "operations-pass-1234"
# The project's settings, connection pool included (pytest-django exports the test
# settings, which turn the pool off, to every process the tests start).
PRODUCTION_SETTINGS = {"DJANGO_SETTINGS_MODULE": "mangagen.settings"}
TOKEN = "metrics-token-for-the-test"


def manage(env: dict, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def status(url: str) -> int:
    """The answer's status, or 0 when none came."""
    try:
        return requests.get(url, timeout=5).status_code
    except requests.RequestException:
        return 0


def signed_in(base_url: str, username: str) -> requests.Session:
    http = requests.Session()
    http.get(f"{base_url}/accounts/login/", timeout=10)
    answer = http.post(
        f"{base_url}/accounts/login/",
        data={
            "username": username,
            "password": PASSWORD,
            "csrfmiddlewaretoken": http.cookies["csrftoken"],
        },
        timeout=10,
    )
    assert answer.ok and "sessionid" in http.cookies
    http.headers["X-CSRFToken"] = http.cookies["csrftoken"]
    return http


MAKE_PERSON = (
    "from django.contrib.auth import get_user_model;"
    "from ledger import services as ledger;"
    "from mangagen.storyboards import services as s;"
    "u = get_user_model().objects.create_user('{name}', password='" + PASSWORD + "');"
    "ledger.grant(account=ledger.account_for(u), amount=5, key='seed-{name}', reason='test');"
    "b = s.create_storyboard(owner=u, title='t');"
    "s.update_storyboard(storyboard=b, panels=[{{'description': 'One.'}},"
    " {{'description': 'Two.'}}]);"
    "print(b.pk)"
)


# --- one web process ------------------------------------------------------------------------


def test_a_web_process_says_what_it_lacks_and_recovers_from_a_dropped_database(tmp_path):
    redis_port, port = free_port(), free_port()
    database_url = fresh_database_url("probes")  # empty: no migration applied
    env = {
        **os.environ,
        **PRODUCTION_SETTINGS,
        "DEBUG": "on",
        "DATABASE_URL": database_url,
        "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",  # nothing listens there yet
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "WEB_PROCESSES": "1",
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    base = f"http://127.0.0.1:{port}"
    log = (tmp_path / "web.log").open("w")
    web = subprocess.Popen(
        [sys.executable, "bin/web"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    redis_server = None
    try:
        wait_for(lambda: status(f"{base}/healthz") == 200, timeout=60, what="the process")
        ready = requests.get(f"{base}/readyz", timeout=5)
        assert ready.status_code == 503
        assert ready.json() == {"failed": ["redis", "migrations"]}

        manage(env, "migrate", "--verbosity", "0")
        assert requests.get(f"{base}/readyz", timeout=5).json() == {"failed": ["redis"]}
        redis_server = start_redis(redis_port)
        wait_for(lambda: status(f"{base}/readyz") == 200, what="ready once Redis answers")

        board = manage(env, "shell", "--verbosity", "0", "-c", MAKE_PERSON.format(name="prober"))
        board = board.strip()
        http = signed_in(base, "prober")
        for _ in range(5):  # connections in the pool, idle between requests
            assert http.get(f"{base}/api/storyboards/{board}/", timeout=10).status_code == 200
        assert drop_database_connections(database_url) >= 1  # a failover
        # Every read after it is answered: the pool hands out no dead connection.
        answers = [http.get(f"{base}/api/storyboards/{board}/", timeout=10) for _ in range(10)]
        assert [a.status_code for a in answers] == [200] * 10
        assert status(f"{base}/readyz") == 200
    finally:
        web.terminate()
        web.wait(timeout=60)
        log.close()
        if redis_server is not None:
            redis_server.kill()


# --- the whole stack ----------------------------------------------------------------------------


@pytest.fixture(scope="module", name="stack")
def operated_stack(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("operations")
    redis_port = free_port()
    redis_server = start_redis(redis_port)
    env = {
        **PRODUCTION_SETTINGS,
        "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "WEB_PROCESSES": "2",
        "LOG_FORMAT": "json",
        "METRICS_TOKEN": TOKEN,
        # Long enough to be caught mid-render; short enough to be quick.
        "RENDER_COLD_START_SECONDS": "4",
        "RENDER_SECONDS": "0.5",
        "RENDER_IDLE_SECONDS": "0",
        "SPECULATION_LOOKAHEAD": "0",
        "HOLD_SWEEP_SECONDS": "2",
        "RENDER_CONCURRENCY": "8",
        "SPECULATIVE_CONCURRENCY": "8",
        "DB_POOL_MAX_SIZE": "8",
        "MEDIA_ROOT": str(tmp / "media"),
        "BEAT_SCHEDULE_FILE": str(tmp / "beat-schedule"),
    }
    try:
        with stack("operations", log=ROOT / "artifacts" / "operations-stack.log", **env) as running:
            running.redis_port = redis_port
            yield running
    finally:
        redis_server.kill()


class Person:
    def __init__(self, stack: Stack, name: str):
        self.stack = stack
        self.board = stack.shell(MAKE_PERSON.format(name=name)).strip()
        self.http = signed_in(stack.base_url, name)
        self.reads: list[int] = []

    def generate(self, **headers) -> int:
        answer = self.http.post(
            f"{self.stack.base_url}/api/storyboards/{self.board}/generate/",
            json={},
            headers=headers,
            timeout=10,
        )
        assert answer.status_code == 201
        return answer.json()["job"]

    def panel(self, job: int, index: int) -> str:
        answer = self.http.get(f"{self.stack.base_url}/api/jobs/{job}/", timeout=10)
        self.reads.append(answer.status_code)
        return next(p["state"] for p in answer.json()["panels"] if p["index"] == index)

    def wait_panel(self, job: int, index: int, *states: str, timeout: float = 60) -> None:
        wait_for(lambda: self.panel(job, index) in states, timeout=timeout, every=0.2,
                 what=f"panel {index} of job {job} to be {'/'.join(states)}")  # fmt: skip

    def events(self, job: int) -> list[str]:
        answer = self.http.get(f"{self.stack.base_url}/api/jobs/{job}/events/", timeout=10)
        return [event["type"] for event in answer.json()["events"]]

    def credits(self) -> dict:
        return self.http.get(f"{self.stack.base_url}/api/me/", timeout=10).json()["credits"]

    def approve(self, job: int, index: int) -> None:
        answer = self.http.post(
            f"{self.stack.base_url}/api/jobs/{job}/panels/{index}/approve/", json={}, timeout=10
        )
        assert answer.status_code == 200


def json_lines(log: Path) -> list[dict]:
    """The stack's JSON log lines (honcho puts `time name | ` before each)."""
    found = []
    for line in log.read_text(errors="replace").splitlines():
        _, _, rest = line.partition("| ")
        if rest.startswith("{"):
            try:
                found.append(json.loads(rest))
            except ValueError:
                continue
    return found


def scrape(stack: Stack) -> str:
    answer = requests.get(
        f"{stack.base_url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10
    )
    assert answer.status_code == 200
    return answer.text


def value(text: str, series: str) -> float:
    match = re.search(rf"^{re.escape(series)} (\S+)$", text, flags=re.MULTILINE)
    return float(match.group(1)) if match else 0.0


def test_a_generate_request_id_reaches_the_render_and_the_capture(stack):
    person = Person(stack, "traced")
    request_id = str(uuid.uuid4())
    job = person.generate(**{"X-Request-ID": request_id})
    person.wait_panel(job, 1, "delivered")

    def traced() -> list[dict]:
        return [line for line in json_lines(stack.log) if line.get("request_id") == request_id]

    def found(logger: str, text: str):
        return lambda: [
            line for line in traced() if line["logger"] == logger and text in line["message"]
        ]

    render = wait_for(found("mangagen.jobs.tasks", f"job {job} panel 1 attempt 1: delivered"),
                      what="the render's log line")  # fmt: skip
    capture = wait_for(found("ledger", "ledger capture: hold"), what="the capture's line")
    assert render[0]["job"] == job and render[0]["panel"] == 1
    assert f"(job {job} panel 1)" in capture[0]["message"]
    assert {"time", "level", "logger", "message", "request_id"} <= set(capture[0])


def test_json_logs_keep_what_housekeeping_says_for_machines(stack):
    """A text terminal hears a sweep only when it did something
    (tests/stack/test_quiet_terminal.py); JSON lines keep every run: beat's send, the
    worker's receipt, the success."""
    task = "mangagen.jobs.tasks.requeue_lost_renders"

    def said(words: str):
        return lambda: [
            line
            for line in json_lines(stack.log)
            if task in line["message"] and words in line["message"]
        ]

    wait_for(said("Sending due task"), what="beat's line for the lost-render sweep")
    wait_for(said("received"), what="the worker's receipt of it")
    wait_for(said("succeeded"), what="its success, with nothing found")


def test_metrics_are_summed_over_every_process(stack):
    person = Person(stack, "counted")
    job = person.generate()
    person.wait_panel(job, 1, "delivered")

    def delivered() -> float:
        return value(scrape(stack), 'mangagen_renders_total{outcome="delivered"}')

    # Counted by a Celery worker, read through a web process: summed over processes.
    wait_for(lambda: delivered() >= 1, what="the worker's count in /metrics")
    texts = [scrape(stack) for _ in range(6)]  # either of the two web processes answers
    assert value(texts[0], "mangagen_metrics_multiprocess") == 1
    counts = {value(t, 'mangagen_renders_total{outcome="delivered"}') for t in texts}
    assert len(counts) == 1 and counts.pop() >= 1
    text = texts[-1]
    assert value(text, 'ledger_operations_total{op="capture",result="ok"}') >= 1
    assert value(text, 'mangagen_render_seconds_count{phase="cold_start"}') >= 1
    assert 'view="api-generate"' in text
    assert value(text, 'mangagen_metrics_source_up{source="redis"}') == 1
    assert value(text, 'mangagen_metrics_source_up{source="database"}') == 1


def test_a_render_worker_killed_mid_render_is_rendered_again_and_charged_once(stack):
    person = Person(stack, "killed")
    job = person.generate()
    person.wait_panel(job, 1, "rendering")  # waiting out its container's cold start
    kill(stack.process.pid, "celery", "worker", every=True)  # both workers
    person.wait_panel(job, 1, "delivered", timeout=90)
    assert "panel.requeued" in person.events(job)
    assert person.credits() == {"available": 4, "held": 0}


def test_redis_dropping_its_clients_mid_job_loses_nothing(stack):
    person = Person(stack, "dropped")
    job = person.generate()
    person.wait_panel(job, 1, "rendering")
    assert drop_redis_clients(stack.redis_port) >= 1
    person.wait_panel(job, 1, "delivered")
    person.approve(job, 1)
    person.wait_panel(job, 2, "delivered")
    assert person.credits() == {"available": 3, "held": 0}


def test_a_database_failover_mid_job_loses_nothing_and_answers_no_500(stack):
    person = Person(stack, "failover")
    job = person.generate()
    person.wait_panel(job, 1, "rendering")
    assert drop_database_connections(stack.env["DATABASE_URL"]) >= 1
    person.wait_panel(job, 1, "delivered")
    person.approve(job, 1)
    person.wait_panel(job, 2, "delivered")
    assert person.credits() == {"available": 3, "held": 0}
    assert set(person.reads) == {200}
