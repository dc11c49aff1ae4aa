"""The real stack for browser tests: `manage.py runstack` (daphne, both Celery
workers, beat) on its own database and Redis database, driven by Debian's
Chromium through Playwright. Tests reach the app only as a person or an
operator would: the browser, HTTP, and `manage.py` commands.
"""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

import pytest

from tests.support.waiting import wait_for

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


# Every page a test opens is watched for what its Content-Security-Policy refuses: the
# page's own `securitypolicyviolation` events (a listener injected before any of its
# scripts, which the policy does not govern) and Chromium's console complaints.
CSP_LISTENER = """
document.addEventListener("securitypolicyviolation", (event) => {
  console.error(`CSP violation: ${event.effectiveDirective} refused ${event.blockedURI}`
    + ` (${event.sourceFile}:${event.lineNumber})`);
});
"""


def csp_watch(context) -> list[str]:
    """Watches every page of `context`; returns the list the violations are added to."""
    found: list[str] = []

    def heard(message) -> None:
        if "CSP violation:" in message.text or "Content Security Policy" in message.text:
            where = message.page.url if message.page else "?"
            found.append(f"{where}: {message.text}")

    context.add_init_script(CSP_LISTENER)
    context.on("console", heard)
    return found


# The violations lists of the contexts opened during the current test.
WATCHED: list[list[str]] = []


@pytest.fixture(autouse=True)
def no_csp_violation():
    """Fails a test in any of whose browser contexts the policy refused something."""
    WATCHED.clear()
    yield
    seen = [violation for found in WATCHED for violation in found]
    WATCHED.clear()
    assert not seen, f"Content-Security-Policy violations: {seen}"


@pytest.fixture(scope="session")
def chat_model():
    """A local stand-in for the chat model the stack's translator asks (TRANSLATOR=openai):
    a test queues the answers it expects to be asked for."""
    from tests.support.standin import serve

    fake, server = serve()
    yield fake
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session", name="stack")
def browsed_stack(chat_model):
    from tests.support.stack import stack

    if not os.environ.get("REDIS_URL"):
        pytest.skip("browser tests need REDIS_URL (make test starts an embedded Redis)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = {
        "HOLD_SWEEP_SECONDS": "3600",
        "RENDER_COLD_START_SECONDS": "3",
        "SPECULATION_DEBOUNCE_MS": "800",
        "RENDER_IDLE_SECONDS": "30",
        "RENDER_SECONDS": "0.3",
        "MEDIA_ROOT": str(ROOT / "var" / "e2e-media"),
        "BEAT_SCHEDULE_FILE": str(ROOT / "var" / "e2e-celerybeat-schedule"),
        "TRANSLATOR": "openai",
        "CHAT_BASE_URL": chat_model.url,
    }
    with stack("e2e", log=ARTIFACTS / "stack.log", **env) as running:
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
        opened = browser.new_context

        def new_context(*args, **kwargs):
            """Every context a test opens (the page fixture's, or its own) is watched."""
            context = opened(*args, **kwargs)
            WATCHED.append(csp_watch(context))
            return context

        browser.new_context = new_context
        yield browser
        browser.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.e2e_failed = report.failed


class Dialogs:
    """Every browser dialog is answered on purpose: a test says which it expects
    (`dialogs.expect(accept=True)`), and one nobody expected fails the test
    instead of being dismissed silently (which once made a draft vanish)."""

    def __init__(self) -> None:
        self.answers: list[bool] = []
        self.unexpected: list[str] = []

    def expect(self, *, accept: bool) -> None:
        self.answers.append(accept)

    def handle(self, dialog) -> None:
        if not self.answers:
            self.unexpected.append(f"{dialog.type}: {dialog.message}")
            dialog.dismiss()
        elif self.answers.pop(0):
            dialog.accept()
        else:
            dialog.dismiss()

    def watch(self, page) -> None:
        page.on("dialog", self.handle)


@pytest.fixture
def dialogs() -> Dialogs:
    return Dialogs()


@pytest.fixture
def page(browser, stack, request, dialogs):
    context = browser.new_context(base_url=stack.base_url, viewport={"width": 1200, "height": 900})
    context.on("page", dialogs.watch)
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
        # CI keeps only what is printed: the stack's complaints while the test ran.
        print(f"== the stack's warnings and requeues ({stack.log}):")
        noted = ("WARNING", "ERROR", "CRITICAL", "Traceback", "requeue", "again")
        for line in stack.log.read_text(errors="replace").splitlines()[-3000:]:
            if any(word in line for word in noted) and "requeue_lost_renders" not in line:
                print(line)
    context.close()
    assert not dialogs.unexpected, f"unexpected browser dialogs: {dialogs.unexpected}"
    assert not dialogs.answers, f"expected dialogs that never came: {dialogs.answers}"


# The one poll-until helper (tests/support/waiting.py) at the browser's pace: a look
# every 0.2 s (each look is a request to the stack), 20 s unless a test says otherwise.
wait_until = functools.partial(wait_for, timeout=20.0, every=0.2)


@pytest.fixture
def shoot(page):
    """Saves a screenshot of a key screen under artifacts/e2e/."""

    def shoot(name: str) -> None:
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)

    return shoot


@pytest.fixture
def shoot_ja(request):
    """Saves a screenshot of a Japanese screen under artifacts/e2e/ (ja-<name>.png)."""

    def shoot(name: str) -> None:
        page = request.getfixturevalue("ja_page")
        page.screenshot(path=str(ARTIFACTS / f"ja-{name}.png"), full_page=True)

    return shoot
