"""The Procfile run as it is (honcho, no PROMETHEUS_MULTIPROC_DIR set): every process of
the machine writes to one metrics folder, emptied as the run starts, so the web process's
/metrics counts the renders the Celery workers delivered (it read zero before: each
process counted alone). mangagen/observability/metrics_folder.py; its unit tests are
mangagen/observability/tests/test_metrics_folder.py."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import requests

from mangagen.observability.metrics_folder import DEFAULT, VARIABLE
from tests.support.stack import (
    ROOT,
    Stack,
    counted,
    migrated_database_url,
    own_redis_url,
)
from tests.support.waiting import wait_for

TOKEN = "procfile-metrics-token"
# What the run before left in the folder: counts that must not be added to this run's.
STALE = (
    "from prometheus_client import Counter;"
    "Counter('mangagen_renders', 'x', ['outcome']).labels(outcome='delivered').inc(1000)"
)


def signed_up(base: str, username: str) -> requests.Session:
    """A person who just signed up through the form."""
    session = requests.Session()
    session.get(f"{base}/accounts/signup/", timeout=10)
    password = "procfile-pass-123"
    answer = session.post(
        f"{base}/accounts/signup/",
        data={
            "username": username,
            "password1": password,
            "password2": password,
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
        headers={"Referer": f"{base}/accounts/signup/"},
        allow_redirects=False,
        timeout=10,
    )
    assert answer.status_code == 302, answer.text[:500]
    return session


class ProcfileRun(Stack):
    """The Procfile under honcho, as `honcho start` runs it: web first, on the port."""

    what = "the Procfile under honcho"

    def command(self) -> list[str]:
        return [sys.executable, "-m", "honcho", "start", "-f", "Procfile", "-p", str(self.port)]


@pytest.fixture
def procfile(tmp_path):
    if not os.environ.get("REDIS_URL"):
        pytest.skip("needs REDIS_URL (bin/with-redis)")
    DEFAULT.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-c", STALE], env={**os.environ, VARIABLE: str(DEFAULT)}, check=True
    )
    assert list(DEFAULT.glob("*.db")), "a count of the run before is there"
    env = {
        VARIABLE: "",  # unset, as in a plain `honcho start`
        "DATABASE_URL": migrated_database_url("procfile_metrics"),
        "REDIS_URL": own_redis_url(),
        "METRICS_TOKEN": TOKEN,
        "MEDIA_ROOT": str(tmp_path / "media"),
        "BEAT_SCHEDULE_FILE": str(tmp_path / "beat-schedule"),
        "GPU_POOL_PREFIX": "procfile-metrics",
        "RENDER_COLD_START_SECONDS": "0",
        "RENDER_SECONDS": "0.1",
    }
    with ProcfileRun(env=env, log=ROOT / "artifacts" / "procfile-metrics.log") as running:
        yield running
    assert not list(DEFAULT.glob("member-*")), "each process left the run as it stopped"


def test_the_web_process_counts_what_the_workers_delivered(procfile):
    run = procfile
    assert counted(run, "mangagen_metrics_multiprocess") == 1
    assert counted(run, "mangagen_renders_total", outcome="delivered") == 0  # emptied
    web = signed_up(run.base_url, "procfile-counter")
    csrf = {"X-CSRFToken": web.cookies["csrftoken"], "Referer": f"{run.base_url}/"}
    assert web.post(f"{run.base_url}/credits/demo/", headers=csrf, timeout=10).ok
    board = web.post(
        f"{run.base_url}/api/storyboards/",
        json={"title": "Counted", "panels": [{"description": "A rooftop.", "shot": "wide"}]},
        headers=csrf,
        timeout=10,
    ).json()["id"]
    job = web.post(
        f"{run.base_url}/api/storyboards/{board}/generate/", json={}, headers=csrf, timeout=10
    ).json()["job"]

    def delivered() -> bool:
        body = web.get(f"{run.base_url}/api/jobs/{job}/", timeout=10).json()
        return body["panels"][0]["state"] == "delivered"

    wait_for(delivered, timeout=60, every=0.2, what="panel one delivered")
    # Counted in the render worker, read by the web process that answers /metrics.
    wait_for(
        lambda: counted(run, "mangagen_renders_total", outcome="delivered") >= 1,
        timeout=20,
        every=0.2,
        what="the worker's delivered render counted in /metrics",
    )
    assert counted(run, "mangagen_renders_total", outcome="delivered") == 1
    members = list(DEFAULT.glob("member-*"))
    assert len(members) == 4, members  # web, render, speculative, beat: one run
