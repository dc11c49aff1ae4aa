"""The real stack for browser tests: `manage.py runstack` (daphne, both Celery
workers, beat) on its own database and Redis database, driven by Debian's
Chromium through Playwright. Tests reach the app only as a person or an
operator would: the browser, HTTP, and `manage.py` commands.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "e2e"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _e2e_database_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith("postgres"):
        import psycopg
        from psycopg import sql

        parts = urlsplit(url)
        name = (parts.path.lstrip("/") or "mangagen") + "_e2e"
        admin = urlunsplit(parts._replace(path="/postgres"))
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return urlunsplit(parts._replace(path=f"/{name}"))
    path = ROOT / "var" / "e2e.sqlite3"
    path.parent.mkdir(exist_ok=True)
    for leftover in path.parent.glob("e2e.sqlite3*"):
        leftover.unlink()
    return f"sqlite:///{path}"


def _e2e_redis_url() -> str:
    url = os.environ.get("REDIS_URL")
    if not url:
        pytest.skip("browser tests need REDIS_URL (make test starts an embedded Redis)")
    return urlunsplit(urlsplit(url)._replace(path="/4"))


class Stack:
    def __init__(self, base_url: str, env: dict[str, str], log: Path):
        self.base_url = base_url
        self.env = env
        self.log = log

    def manage(self, *args: str, input: str | None = None) -> str:
        """Runs a management command against the stack's database."""
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            input=input,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def shell(self, code: str) -> str:
        return self.manage("shell", "--verbosity", "0", "-c", code)


@pytest.fixture(scope="session")
def stack():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": _e2e_database_url(),
        "REDIS_URL": _e2e_redis_url(),
        "DEBUG": "on",
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "HOLD_SWEEP_SECONDS": "3600",
        "RENDER_COLD_START_SECONDS": "2",
        "RENDER_IDLE_SECONDS": "30",
        "RENDER_SECONDS": "0.3",
        "MEDIA_ROOT": str(ROOT / "var" / "e2e-media"),
        "BEAT_SCHEDULE_FILE": str(ROOT / "var" / "e2e-celerybeat-schedule"),
        "PYTHONUNBUFFERED": "1",
    }
    Path(env["BEAT_SCHEDULE_FILE"]).unlink(missing_ok=True)
    log = ARTIFACTS / "stack.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "runstack", "--no-demo", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(base_url + "/accounts/login/", process, log)
        yield Stack(base_url, env, log)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def _wait_for(url: str, process: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the stack exited early:\n{log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"the stack did not answer in {timeout} s:\n{log.read_text()[-4000:]}")


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if not executable:
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.e2e_failed = report.failed


@pytest.fixture
def page(browser, stack, request):
    context = browser.new_context(base_url=stack.base_url, viewport={"width": 1200, "height": 900})
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: console.append(f"pageerror: {error}"))
    page.set_default_timeout(15000)
    yield page
    if getattr(request.node, "e2e_failed", False):
        name = request.node.name
        page.screenshot(path=str(ARTIFACTS / f"FAILED-{name}.png"), full_page=True)
        (ARTIFACTS / f"FAILED-{name}.console.log").write_text("\n".join(console))
    context.close()


@pytest.fixture
def shoot(page):
    """Saves a screenshot of a key screen under artifacts/e2e/."""

    def shoot(name: str) -> None:
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)

    return shoot
