"""The real stack for browser tests: `manage.py runstack` (daphne, both Celery
workers, beat) on its own database and Redis database, driven by Debian's
Chromium through Playwright. Tests reach the app only as a person or an
operator would: the browser, HTTP, and `manage.py` commands.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

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


@pytest.fixture(scope="session")
def stack():
    from bench.stack import Stack, fresh_database_url, redis_url

    if not os.environ.get("REDIS_URL"):
        pytest.skip("browser tests need REDIS_URL (make test starts an embedded Redis)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = {
        "DATABASE_URL": fresh_database_url("e2e"),
        "REDIS_URL": redis_url(4),
        "HOLD_SWEEP_SECONDS": "3600",
        "RENDER_COLD_START_SECONDS": "3",
        "SPECULATION_DEBOUNCE_MS": "800",
        "RENDER_IDLE_SECONDS": "30",
        "RENDER_SECONDS": "0.3",
        "MEDIA_ROOT": str(ROOT / "var" / "e2e-media"),
        "BEAT_SCHEDULE_FILE": str(ROOT / "var" / "e2e-celerybeat-schedule"),
    }
    with Stack(env=env, log=ARTIFACTS / "stack.log") as running:
        yield running


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
