"""Production as the deploy guide sets it up (docs/deploy.md), one piece at a time: the
release step and its lock, the headers (Content-Security-Policy with nonces and its
report address, Permissions-Policy, HSTS preload only when asked), `check --deploy`
with the documented settings, /metrics scraped by the process's own address, /readyz
and the start-up log when the release has not run, beat's schedule folder, and bin/web
reading .env and the proxy's headers. The whole walk, behind nginx, from a fresh clone:
tests/stack/test_deploy.py."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from django.contrib.staticfiles.storage import staticfiles_storage

from mangagen.kernel.beat_schedule import FolderMakingScheduler
from mangagen.observability import health
from tests.support.stack import free_port, fresh_database_url
from tests.support.waiting import wait_for

ROOT = Path(__file__).resolve().parents[1]
SECRET = "a-long-random-production-secret-for-the-tests-" + "q7Z" * 12
# What docs/deploy.md's .env names, no optional setting among them.
PRODUCTION = {
    "DEBUG": "off",
    "SECRET_KEY": SECRET,
    "ALLOWED_HOSTS": "comics.example",
    "BEHIND_PROXY": "on",
    "PROXY_REDIRECTS_TO_HTTPS": "on",
}


def clean_env(**env: str) -> dict[str, str]:
    unset = {"DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "SECURE_SSL_REDIRECT", "BEHIND_PROXY"}
    return {k: v for k, v in os.environ.items() if k not in unset} | env


def manage(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# --- check --deploy with the documented settings ------------------------------------------


def test_check_deploy_is_clean_with_the_documented_settings():
    done = manage("check", "--deploy", "--fail-level", "WARNING", env=clean_env(**PRODUCTION))
    assert done.returncode == 0, done.stderr + done.stdout
    assert "no issues" in done.stdout


def test_the_redirect_warning_is_silenced_only_where_the_proxy_redirects():
    no_redirect = clean_env(**(PRODUCTION | {"PROXY_REDIRECTS_TO_HTTPS": "off"}))
    no_redirect["SECURE_SSL_REDIRECT"] = "off"
    done = manage("check", "--deploy", "--fail-level", "WARNING", env=no_redirect)
    assert done.returncode != 0
    assert "security.W008" in done.stderr


def test_hsts_preload_is_sent_only_when_asked(settings):
    code = "from django.conf import settings; print(settings.SECURE_HSTS_PRELOAD)"
    off = manage("shell", "-v", "0", "-c", code, env=clean_env(**PRODUCTION))
    on = manage(
        "shell", "-v", "0", "-c", code, env=clean_env(**PRODUCTION, SECURE_HSTS_PRELOAD="on")
    )
    assert (off.stdout.strip(), on.stdout.strip()) == ("False", "True"), off.stderr + on.stderr


# --- the headers -----------------------------------------------------------------------------


def directives(header: str) -> dict[str, list[str]]:
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


@pytest.mark.django_db
def test_pages_carry_a_policy_whose_scripts_are_this_sites_or_nonced(client):
    response = client.get("/accounts/login/")
    policy = directives(response["Content-Security-Policy"])
    nonce = re.search(r"'nonce-([^']+)'", " ".join(policy["script-src"])).group(1)
    assert "'self'" in policy["script-src"]
    assert "'unsafe-inline'" not in policy["script-src"]
    assert "'unsafe-eval'" not in policy["script-src"]
    assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"]
    assert policy["report-uri"] == ["/csp-report/"]
    scripts = re.findall(r"<script\b[^>]*>", response.content.decode())
    runnable = [s for s in scripts if 'type="application/json"' not in s]
    assert runnable and all(f'nonce="{nonce}"' in s for s in runnable), scripts
    # A fresh nonce for each answer.
    again = directives(client.get("/accounts/login/")["Content-Security-Policy"])
    assert f"'nonce-{nonce}'" not in again["script-src"]


@pytest.mark.django_db
def test_every_answer_refuses_the_features_no_page_uses(client):
    policy = client.get("/accounts/login/")["Permissions-Policy"]
    assert {"camera=()", "microphone=()", "geolocation=()"} <= set(policy.split(", "))


@pytest.mark.django_db
def test_a_violation_report_is_logged_bounded(client, caplog):
    report = {
        "csp-report": {
            "document-uri": "https://comics.example/comics/1/story/",
            "effective-directive": "script-src-elem",
            "blocked-uri": "inline",
        }
    }
    with caplog.at_level(logging.WARNING, logger="mangagen.csp"):
        answer = client.post(
            "/csp-report/", json.dumps(report), content_type="application/csp-report"
        )
        junk = client.post("/csp-report/", b"x" * 100_000, content_type="application/json")
    assert (answer.status_code, junk.status_code) == (204, 204)
    said = [r.getMessage() for r in caplog.records if r.name == "mangagen.csp"]
    assert "script-src-elem" in said[0] and "/comics/1/story/" in said[0]
    assert len(said[1]) < 1000  # the junk, cut short
    assert client.get("/csp-report/").status_code == 405


@pytest.mark.django_db
def test_the_api_browser_runs_no_inline_script(client, make_user):
    client.force_login(make_user(is_staff=True))
    page = client.get("/api/docs/")
    assert page.status_code == 200
    scripts = re.findall(r"<script\b([^>]*)>", page.content.decode())
    assert scripts and all("src=" in s for s in scripts), scripts
    script = client.get("/api/docs/?script")
    assert script.status_code == 200 and "javascript" in script["Content-Type"]


# --- /metrics by the process's own address --------------------------------------------------


@pytest.mark.django_db
def test_metrics_by_the_processs_own_address_answer_the_token(client, settings, caplog):
    settings.METRICS_TOKEN = "scrape-token"
    settings.ALLOWED_HOSTS = ["comics.example"]
    own = {"HTTP_HOST": "10.0.0.5:8000"}
    with caplog.at_level(logging.ERROR):
        scraped = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-token", **own)
        wrong = client.get("/metrics", HTTP_AUTHORIZATION="Bearer not-it", **own)
    assert scraped.status_code == 200, scraped.content
    assert b"mangagen_renders_total" in scraped.content
    assert wrong.status_code == 401 and wrong.json()["error"] == "not_authenticated"
    assert not [r for r in caplog.records if "DisallowedHost" in r.getMessage()]
    # No token: a request like any other, Host checked.
    assert client.get("/metrics", **own).status_code == 400


# --- what the release has not done, in /readyz and the log ------------------------------------


@pytest.fixture
def hashed_static_not_collected(settings, tmp_path):
    settings.STATIC_ROOT = tmp_path / "staticfiles"
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "mangagen.kernel.static_storage.HashedStaticStorage"},
    }
    return settings


@pytest.mark.django_db
def test_readyz_says_static_when_the_files_were_not_collected(client, hashed_static_not_collected):
    ready = client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json() == {"failed": ["static"]}


@pytest.mark.django_db
def test_a_process_says_at_start_what_the_release_left(hashed_static_not_collected, caplog):
    with caplog.at_level(logging.ERROR, logger="mangagen.observability.health"):
        missing = health.log_unreleased("The web process 7", serves_static=True)
        worker = health.log_unreleased("The worker render@x", serves_static=False)
    assert (missing, worker) == ([health.Check.STATIC], [])
    (line,) = [r.getMessage() for r in caplog.records]
    assert "The web process 7" in line and "bin/release" in line and "static files" in line


@pytest.mark.django_db
def test_collected_static_files_make_it_ready(client, settings, tmp_path):
    settings.STATIC_ROOT = tmp_path / "staticfiles"
    manifest = {"version": "1.1", "paths": {"css/app.css": "css/app.0123456789ab.css"}}
    settings.STATIC_ROOT.mkdir()
    (settings.STATIC_ROOT / "staticfiles.json").write_text(json.dumps(manifest))
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "mangagen.kernel.static_storage.HashedStaticStorage"},
    }
    assert staticfiles_storage.url("css/app.css").endswith("css/app.0123456789ab.css")
    assert client.get("/readyz").json() == {"status": "ok"}


# --- bin/release ---------------------------------------------------------------------------


def release(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [str(ROOT / "bin" / "release")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_release_collects_hashed_files_and_can_run_again(tmp_path):
    env = clean_env(
        **PRODUCTION,
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        STATIC_ROOT=str(tmp_path / "static"),
        VIRTUAL_ENV=str(Path(sys.executable).parents[1]),
    )
    first = release(env)
    said = first.communicate(timeout=300)[0]
    assert first.returncode == 0, said
    manifest = json.loads((tmp_path / "static" / "staticfiles.json").read_text())["paths"]
    hashed = manifest["js/job.js"]
    assert re.fullmatch(r"js/job\.[0-9a-f]{12}\.js", hashed)
    # The modules import one another by their hashed names too.
    imports = re.findall(r'from "\./([^"]+)"', (tmp_path / "static" / hashed).read_text())
    assert imports and all(f"js/{name}" in manifest.values() for name in imports), imports
    assert (tmp_path / "static" / (hashed + ".gz")).exists()
    again = release(env)
    said = again.communicate(timeout=300)[0]
    assert again.returncode == 0, said
    assert "No migrations to apply" in said


def _waits_then_goes(process: subprocess.Popen, unlock, before) -> str:
    """Reads `process`'s output until it says it waits, checks `before()`, unlocks, and
    returns the rest once it has finished."""
    assert process.stdout is not None
    seen = []
    for line in process.stdout:
        seen.append(line)
        if "Another release is running" in line:
            break
    assert "Another release is running" in "".join(seen), "".join(seen)
    before()
    unlock()
    rest = process.communicate(timeout=300)[0]
    assert process.returncode == 0, "".join(seen) + rest
    return rest


def test_release_waits_for_another_on_sqlite(tmp_path):
    database = tmp_path / "db.sqlite3"
    env = clean_env(DEBUG="on", DATABASE_URL=f"sqlite:///{database}")
    with open(tmp_path / "db.sqlite3.release-lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another release, as it holds the lock
        process = release(env)
        rest = _waits_then_goes(
            process,
            unlock=lambda: fcntl.flock(held, fcntl.LOCK_UN),
            before=lambda: not database.exists() or database.stat().st_size == 0,
        )
    assert "Released" in rest and database.stat().st_size > 0


@pytest.mark.postgres
def test_release_waits_for_another_on_postgresql():
    import psycopg

    from mangagen.management.commands.release import LOCK_KEY

    url = fresh_database_url("mg_release_lock")
    env = clean_env(DEBUG="on", DATABASE_URL=url)

    def tables() -> int:
        with psycopg.connect(url) as conn:
            found = conn.execute("SELECT to_regclass('django_migrations')").fetchone()
            return found[0] is not None

    with psycopg.connect(url, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s)", [LOCK_KEY])
        process = release(env)
        rest = _waits_then_goes(
            process,
            unlock=lambda: other.execute("SELECT pg_advisory_unlock(%s)", [LOCK_KEY]),
            before=lambda: not tables(),
        )
    assert "Released" in rest and tables()


# --- beat and bin/web on a fresh clone --------------------------------------------------------


def test_beat_makes_its_schedules_folder(tmp_path):
    from mangagen.celery import app

    path = tmp_path / "not" / "yet" / "celerybeat-schedule"
    scheduler = FolderMakingScheduler(app=app, schedule_filename=str(path), lazy=False)
    scheduler.close()
    assert path.parent.is_dir() and list(path.parent.iterdir())


def test_bin_web_reads_env_and_logs_the_clients_address_behind_a_proxy(tmp_path):
    port = free_port()
    env_file = tmp_path / ".env"
    env_file.write_text(f"PORT={port}\nHOST=127.0.0.1\nBEHIND_PROXY=on\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PORT", "HOST", "BEHIND_PROXY")}
    log = tmp_path / "web.log"
    with log.open("w") as out:
        web = subprocess.Popen(
            [sys.executable, "bin/web"],
            cwd=ROOT,
            env=env | {"ENV_FILE": str(env_file), "PYTHONUNBUFFERED": "1"},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:

        def answered():
            try:
                return requests.get(
                    f"http://127.0.0.1:{port}/healthz",
                    headers={"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https"},
                    timeout=2,
                ).ok
            except requests.RequestException:  # not listening yet, or daphne not yet serving
                return web.poll() is not None and pytest.fail(log.read_text())

        wait_for(answered, timeout=60, every=0.2, what=lambda: log.read_text())
        wait_for(
            lambda: re.search(r"^203\.0\.113\.7:\d+ .*GET /healthz", log.read_text(), re.M),
            timeout=10,
            what=lambda: f"the client's address in the access log:\n{log.read_text()}",
        )
    finally:
        os.killpg(web.pid, signal.SIGTERM)
        web.wait(timeout=20)


def test_a_web_process_started_before_the_release_says_so(tmp_path):
    """DEBUG off, an empty database, nothing collected: the process logs what is missing
    as it starts, and /readyz names it."""
    port = free_port()
    env = clean_env(
        **PRODUCTION,
        DATABASE_URL=f"sqlite:///{tmp_path / 'empty.sqlite3'}",
        STATIC_ROOT=str(tmp_path / "static"),
        HOST="127.0.0.1",
        PORT=str(port),
        PYTHONUNBUFFERED="1",
    )
    log = tmp_path / "web.log"
    with log.open("w") as out:
        web = subprocess.Popen(
            [sys.executable, "bin/web"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:

        def readiness() -> list[requests.Response]:
            """The answer, in a list (a 503 Response is falsy)."""
            try:
                return [requests.get(f"http://127.0.0.1:{port}/readyz", timeout=2)]
            except requests.RequestException:  # not listening yet, or daphne not yet serving
                if web.poll() is not None:
                    pytest.fail(log.read_text())
                return []

        [ready] = wait_for(readiness, timeout=60, every=0.2, what=lambda: log.read_text())
        assert ready.status_code == 503
        assert ready.json() == {"failed": ["migrations", "static"]}
        said = log.read_text()
        assert "started before the release step" in said and "bin/release" in said
        assert "lacks migrations" in said and "no collected static files" in said
    finally:
        os.killpg(web.pid, signal.SIGTERM)
        web.wait(timeout=20)
