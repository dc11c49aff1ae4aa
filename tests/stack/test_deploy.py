"""docs/deploy.md, followed from a fresh clone to a working site behind the shipped nginx.

A `git clone` of this checkout's HEAD (its virtualenv borrowed: CI installed the
requirements first), an empty PostgreSQL database, and the guide's own `.env` block
(read from docs/deploy.md, its secrets and addresses filled in, and nothing else but a
short sweep interval, a documented setting, so the sweep can be seen within the test).
Then as the guide says: `bin/release` twice at once, both succeeding; the Procfile's
processes under honcho, DEBUG off; `deploy/nginx.conf` as shipped, only its addresses,
ports, certificate and cache folder changed, run by Debian's nginx with a self-signed
certificate. Over HTTPS through nginx: every CSS and JS file answers 200 with a year's
cache lifetime for its hashed name; a person signs up, is granted credits as the guide
says, generates, and the panel's events come over the websocket through nginx; a 5 MB
sheet is accepted; a styled 404; a browser walks the wizard and the job page with no
Content-Security-Policy violation; `/metrics` by the web process's own address with
the token; beat still alive after a minute and a stale hold swept; and
`check --deploy --fail-level WARNING` clean.
"""

from __future__ import annotations

import io
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from PIL import Image

from tests.support.people import PASSWORD, Visitor
from tests.support.stack import ROOT, free_port, fresh_database_url, own_redis_url
from tests.support.waiting import wait_for

pytestmark = pytest.mark.postgres

ARTIFACTS = ROOT / "artifacts" / "deploy"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
PANELS = [
    {"description": "Aiko runs through the rain.", "shot": "wide", "characters": ["Aiko"]},
    {"description": "Aiko stops at the door.", "shot": "medium", "characters": ["Aiko"]},
]
# What the test fills in of the guide's .env; every other line of it is kept as written.
FILLED = {"SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "REDIS_URL", "PORT", "METRICS_TOKEN"}


def guide_env() -> dict[str, str]:
    """The `.env` block of docs/deploy.md, as lines KEY=VALUE."""
    text = (ROOT / "docs" / "deploy.md").read_text()
    block = re.search(r"```sh\n# /srv/mangagen/\.env\n(.*?)```", text, re.S)
    assert block, "docs/deploy.md has no .env block"
    return dict(line.split("=", 1) for line in block.group(1).splitlines() if "=" in line)


def run(command: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 300):
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def stop(process: subprocess.Popen | None) -> None:
    if process is None or process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


class Site:
    """The clone, its settings, and the processes started for it."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.clone = tmp / "mangagen"
        self.port, self.https, self.http = free_port(), free_port(), free_port()
        self.token = secrets.token_urlsafe(24)
        self.url = f"https://localhost:{self.https}"
        self.processes: list[subprocess.Popen] = []
        self.env = {
            # Nothing of the test process's own settings: what a server's shell has.
            "PATH": os.pathsep.join(
                [str(self.clone / ".venv" / "bin"), "/usr/local/bin", "/usr/bin", "/bin"]
            ),
            "HOME": os.environ.get("HOME", "/root"),
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
        }

    def make(self) -> None:
        done = run(
            ["git", "clone", "--quiet", str(ROOT), str(self.clone)], cwd=self.tmp, env=self.env
        )
        assert done.returncode == 0, done.stderr
        # The checkout's virtualenv (sys.prefix: the venv, not the interpreter it links to).
        (self.clone / ".venv").symlink_to(Path(sys.prefix))
        written = guide_env()
        assert set(written) >= FILLED, sorted(FILLED - set(written))
        filled = {
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "localhost",
            "DATABASE_URL": fresh_database_url("deploy_stack"),
            "REDIS_URL": own_redis_url(),
            "PORT": str(self.port),
            "METRICS_TOKEN": self.token,
        }
        settings = {**written, **filled, "HOLD_SWEEP_SECONDS": "2"}
        (self.clone / ".env").write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        self.settings = settings

    def manage(self, *args: str) -> str:
        done = run([sys.executable, "manage.py", *args], cwd=self.clone, env=self.env)
        assert done.returncode == 0, done.stderr + done.stdout
        return done.stdout

    def start(self, name: str, command: list[str], cwd: Path) -> Path:
        log = ARTIFACTS / f"{name}.log"
        with log.open("w") as out:
            self.processes.append(
                subprocess.Popen(
                    command,
                    cwd=cwd,
                    env=self.env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        return log

    def certificate(self) -> Path:
        folder = self.tmp / "tls"
        folder.mkdir()
        done = run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=localhost",
                "-addext",
                "subjectAltName=DNS:localhost",
                "-keyout",
                str(folder / "privkey.pem"),
                "-out",
                str(folder / "fullchain.pem"),
            ],
            cwd=folder,
            env=self.env,
        )
        assert done.returncode == 0, done.stderr
        return folder

    def nginx_conf(self, tls: Path) -> Path:
        """The shipped site file, its addresses, ports, certificate and cache folder
        changed (each exactly where the guide says to change them), in a main file."""
        prefix = self.tmp / "nginx"
        for folder in ("logs", "cache", "temp"):
            (prefix / folder).mkdir(parents=True)
        site = (self.clone / "deploy" / "nginx.conf").read_text()
        changes = [
            ("    listen [::]:80;\n", ""),
            ("    listen [::]:443 ssl http2;\n", ""),
            ("listen 80;", f"listen 127.0.0.1:{self.http};"),
            ("listen 443 ssl http2;", f"listen 127.0.0.1:{self.https} ssl http2;"),
            ("/etc/letsencrypt/live/comics.example.com/", f"{tls}/"),
            ("server 127.0.0.1:8000;", f"server 127.0.0.1:{self.port};"),
            ("/var/cache/nginx/mangagen", str(prefix / "cache")),
        ]
        for old, new in changes:
            assert old in site, f"deploy/nginx.conf no longer has {old!r}"
            site = site.replace(old, new)
        (prefix / "site.conf").write_text(site)
        temp = prefix / "temp"
        main = f"""
{"user root;" if os.geteuid() == 0 else ""}
daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log stderr notice;
events {{ worker_connections 256; }}
http {{
    include /etc/nginx/mime.types;
    access_log {prefix}/logs/access.log;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    include {prefix}/site.conf;
}}
"""
        (prefix / "nginx.conf").write_text(main)
        return prefix


def answers(url: str, **kwargs) -> bool:
    try:
        return requests.get(url, timeout=3, **kwargs).status_code == 200
    except requests.RequestException:
        return False


@pytest.fixture
def site(tmp_path, monkeypatch):
    if not Path(NGINX).exists() or not shutil.which("openssl"):
        pytest.skip("needs nginx and openssl (.ci/run installs them)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    made = Site(tmp_path)
    made.make()
    yield made
    for process in reversed(made.processes):
        stop(process)


def test_the_deploy_guide_takes_a_fresh_clone_to_a_working_site(site, monkeypatch):
    # --- the release step, twice at once, on an empty database ------------------------------
    releases = [
        subprocess.Popen(
            ["bin/release"],
            cwd=site.clone,
            env=site.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(2)
    ]
    said = [release.communicate(timeout=600)[0] for release in releases]
    assert [r.returncode for r in releases] == [0, 0], "\n".join(said)
    (ARTIFACTS / "release.log").write_text("\n=====\n".join(said))
    assert not (site.clone / "var").exists(), "a fresh clone has no var/ (beat must make it)"

    # --- the processes (Procfile, honcho) and nginx in front ---------------------------------
    started = time.monotonic()
    stack_log = site.start(
        "honcho", [str(site.clone / ".venv" / "bin" / "honcho"), "start"], site.clone
    )
    direct = f"http://127.0.0.1:{site.port}"
    wait_for(
        lambda: (
            answers(f"{direct}/readyz")
            and {"render", "speculative"}
            <= set(re.findall(r"\b(\w+)@\S+ ready\.", stack_log.read_text()))
        ),
        timeout=120,
        every=0.5,
        what=lambda: f"the processes to be ready:\n{stack_log.read_text()[-4000:]}",
    )
    tls = site.certificate()
    prefix = site.nginx_conf(tls)
    checked = run(
        [NGINX, "-t", "-p", str(prefix), "-c", str(prefix / "nginx.conf")], cwd=prefix, env=site.env
    )
    assert checked.returncode == 0, checked.stderr
    nginx_log = site.start(
        "nginx", [NGINX, "-p", str(prefix), "-c", str(prefix / "nginx.conf")], prefix
    )
    cert = str(tls / "fullchain.pem")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", cert)
    monkeypatch.setenv("WEBSOCKET_CLIENT_CA_BUNDLE", cert)
    wait_for(
        lambda: answers(f"{site.url}/readyz"),
        timeout=30,
        every=0.2,
        what=lambda: f"nginx to answer:\n{nginx_log.read_text()[-2000:]}",
    )
    assert "started before the release step" not in stack_log.read_text()

    # --- plain HTTP goes to HTTPS; pages carry the production headers -----------------------
    plain = requests.get(
        f"http://127.0.0.1:{site.http}/accounts/login/", allow_redirects=False, timeout=10
    )
    assert plain.status_code == 301 and plain.headers["Location"].startswith("https://")
    login = requests.get(f"{site.url}/accounts/login/", timeout=10)
    assert login.status_code == 200
    assert "max-age=" in login.headers["Strict-Transport-Security"]
    assert "preload" not in login.headers["Strict-Transport-Security"]
    assert (
        "'unsafe-inline'"
        not in login.headers["Content-Security-Policy"].split("script-src")[1].split(";")[0]
    )
    assert "camera=()" in login.headers["Permissions-Policy"]

    # --- every CSS and JS file, hashed, kept a year ---------------------------------------
    manifest = json.loads((site.clone / "staticfiles" / "staticfiles.json").read_text())["paths"]
    files = sorted(v for v in manifest.values() if v.endswith((".css", ".js")))
    assert len(files) > 20
    referenced = re.findall(r'(?:href|src)="(/static/[^"]+)"', login.text)
    assert referenced and all(
        re.search(r"\.[0-9a-f]{12}\.(css|js|svg)$", ref) for ref in referenced
    ), referenced
    for name in files:
        got = requests.get(f"{site.url}/static/{name}", timeout=10)
        assert got.status_code == 200, name
        control = got.headers.get("Cache-Control", "")
        max_age = int(re.search(r"max-age=(\d+)", control).group(1))
        assert max_age >= 365 * 24 * 3600 and "immutable" in control, (name, control)

    # --- a person: sign up, credits as the guide says, generate, events over the websocket ---
    person = Visitor(site.url)
    site.manage("grant_credits", person.username, "5", "--reason", "deploy test")
    credits_page = person.get("/credits/").text
    assert "Buying credits is not available on this site yet" in credits_page
    assert "Stripe" not in credits_page
    board = person.post("/api/storyboards/", {"title": "Deployed", "story": "Aiko runs."})
    assert board.status_code == 201, board.text
    board_id = board.json()["id"]
    patched = person.request(
        "PATCH",
        f"/api/storyboards/{board_id}/",
        json={"characters": [{"name": "Aiko", "description": "red scarf"}], "panels": PANELS},
    )
    assert patched.status_code == 200, patched.text
    generated = person.post(f"/api/storyboards/{board_id}/generate/")
    assert generated.status_code == 201, generated.text
    job = generated.json()["job"]
    socket = person.websocket(f"/ws/jobs/{job}/?after=0", timeout=60)
    seen = []
    while "panel.delivered" not in seen:
        message = json.loads(socket.recv())
        seen += [m.get("type") for m in message.get("events", [message])]
    socket.close()
    assert "panel.rendering" in seen or "panel.queued" in seen, seen

    # --- a 5 MB sheet (nginx's own limit is 1 MB) ------------------------------------------
    sheet = io.BytesIO()
    Image.frombytes("RGB", (1280, 1300), os.urandom(1280 * 1300 * 3)).save(
        sheet, "PNG", compress_level=0
    )
    size = len(sheet.getvalue())
    assert 4.5 * 2**20 < size <= 5 * 2**20, size
    uploaded = person.request(
        "PUT",
        f"/api/storyboards/{board_id}/characters/Aiko/sheet/",
        files={"image": ("aiko.png", sheet.getvalue(), "image/png")},
    )
    assert uploaded.status_code == 200, uploaded.text[:500]

    # --- a styled 404 ------------------------------------------------------------------------
    missing = person.get("/no-such-page/")
    assert missing.status_code == 404
    assert 'id="error-page"' in missing.text and 'id="way-back"' in missing.text
    stylesheet = re.search(r'href="(/static/css/app\.[0-9a-f]{12}\.css)"', missing.text).group(1)
    assert person.get(stylesheet).status_code == 200

    # --- the browser: the wizard and the job page, no CSP violation -------------------------
    # In a thread of its own: Playwright's sync API refuses a thread with an event loop
    # running, as the browser tests' session leaves the main one in a whole-suite run.
    with ThreadPoolExecutor(max_workers=1) as walker:
        violations = walker.submit(browser_walk, site, person.username, board_id, job).result()
    assert violations == [], violations
    assert "Content-Security-Policy violation" not in stack_log.read_text()

    # --- /metrics by the process's own address, the token deciding --------------------------
    scraped = requests.get(
        f"{direct}/metrics", headers={"Authorization": f"Bearer {site.token}"}, timeout=10
    )
    assert scraped.status_code == 200 and "mangagen_renders_total" in scraped.text
    assert requests.get(f"{site.url}/metrics", timeout=10).status_code == 404  # not public
    assert "DisallowedHost" not in stack_log.read_text()
    assert "Invalid HTTP_HOST" not in stack_log.read_text()

    # --- beat: alive after a minute, and it sweeps a stale hold -----------------------------
    # Beat has run a minute (the stack's other checks took most of it), then a hold goes
    # stale: the sweep that releases it is beat's, still running.
    wait_for(lambda: time.monotonic() - started >= 60, timeout=65, every=1, what="a minute")
    hold = site.manage(
        "shell",
        "-v",
        "0",
        "-c",
        "from datetime import timedelta; from django.utils import timezone; "
        "from django.contrib.auth import get_user_model; from ledger import services; "
        "from ledger.models import Hold; "
        f"a = services.account_for(get_user_model().objects.get(username='{person.username}')); "
        "h = services.authorize(account=a, amount=1, key='deploy-stale', reference='stale'); "
        "Hold.objects.filter(pk=h.pk).update(expires_at=timezone.now() - timedelta(minutes=1)); "
        "print(h.pk)",
    ).strip()

    def hold_state() -> str:
        return site.manage(
            "shell",
            "-v",
            "0",
            "-c",
            f"from ledger.models import Hold; print(Hold.objects.get(pk={hold}).state)",
        ).strip()

    wait_for(lambda: hold_state() == "expired", timeout=60, every=1, what="the sweep")
    log = stack_log.read_text()
    assert not re.search(r"^\S+ beat\.1\s+\| .*exited with", log, re.M), log[-3000:]
    assert (site.clone / "var").is_dir()  # beat made its schedule's folder
    assert "Traceback" not in log, log[-6000:]

    # --- the deploy checks, with the guide's settings -----------------------------------------
    checked = site.manage("check", "--deploy", "--fail-level", "WARNING")
    assert "no issues" in checked


def browser_walk(site: Site, username: str, board: int, job: int) -> list[str]:
    """Signs in with Chromium and walks the wizard's steps, the job page (its websocket
    through nginx), the Credits page and a 404; returns every CSP violation seen (the
    page's `securitypolicyviolation` events and the console's CSP complaints)."""
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import CHROMIUM_ARGS, csp_watch

    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if not executable:
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS
        )
        context = browser.new_context(base_url=site.url, ignore_https_errors=True)
        violations = csp_watch(context)
        page = context.new_page()
        page.set_default_timeout(30000)
        page.goto("/accounts/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", PASSWORD)
        page.locator("#content").get_by_role("button", name="Log in").click()
        page.wait_for_url(re.compile(r"/$"))
        for step in ("story", "characters", "storyboard", "review"):
            page.goto(f"/comics/{board}/{step}/")
            page.wait_for_function("() => typeof window.gettext === 'function'")
        page.goto(f"/comics/{board}/jobs/{job}/")
        page.locator(".job-panel img").first.wait_for(state="visible")
        page.goto("/credits/")
        page.goto("/no-such-page/")
        page.screenshot(path=str(ARTIFACTS / "404.png"), full_page=True)
        context.close()
        browser.close()
    return violations
