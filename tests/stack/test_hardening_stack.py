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
from PIL import Image

from tests.support.people import Visitor
from tests.support.processes import (
    Peak,
    peak_resident_bytes,
    reset_peak,
    resident_bytes,
    serving,
    temporary_bytes,
)
from tests.support.redis_server import start_redis
from tests.support.stack import ROOT, Stack, counted, free_port, stack

MiB = 1024 * 1024
READS_ALLOWED = 20  # THROTTLE_READ here: a day, so no window ends during the test
LANGUAGES = ("fr", "de", "es", "it", "pt", "nl", "sv", "pl")


@pytest.fixture(scope="module", name="stack")
def hardening_stack(tmp_path_factory):
    port = free_port()
    own_redis = start_redis(port)
    folder = tmp_path_factory.mktemp("hardening-stack")
    temporary = folder / "tmp"
    temporary.mkdir()
    env = {
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
        "DRAWING_CPU_SECONDS_PER_MINUTE": str(STRIP_BUDGET),
    }
    try:
        with stack(
            "hardening_stack", log=ROOT / "artifacts" / "hardening-stack.log", **env
        ) as running:
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


# --- touch-up masks --------------------------------------------------------------------------


def huge_mask() -> bytes:
    """A 6324×6324 PNG (40 Mpx), some 160 KB: all black but a white square."""
    image = Image.new("L", (6324, 6324), 0)
    image.paste(255, (100, 100, 2000, 2000))
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def test_six_40_mpx_masks_from_an_account_without_credits_answer_402_within_150_mb(stack, race):
    [web] = serving(stack.port, command="mangagen.web.daphne_server")
    person = Visitor(stack.base_url)
    board = kept_comic(stack, person)
    assert person.get("/api/me/").json()["credits"]["available"] == 0
    mask = huge_mask()
    path = f"{stack.base_url}/api/storyboards/{board}/panels/1/touchup/"

    def post():
        session = requests.Session()
        session.cookies.update(person.http.cookies)
        return session.post(
            path,
            files={"mask": ("mask.png", mask, "image/png")},
            data={"prompt": "rain"},
            headers={"X-CSRFToken": person.csrf, "Referer": stack.base_url + "/"},
            timeout=300,
        )

    before = resident_bytes(web)
    reset_peak(web)
    answers = race([post] * 6, timeout=300)
    grown = peak_resident_bytes(web) - before
    print(f"web process: {before:,} bytes resident before, at most {grown:,} more")
    for answer in answers:
        assert isinstance(answer, requests.Response), answer
        assert answer.status_code == 402, answer.text[:300]
        assert answer.json()["error"] == "insufficient_credits"
    assert grown < 150 * MiB


def test_fifteen_cancelled_touch_ups_then_a_deleted_comic_leave_no_file(stack):
    person = Visitor(stack.base_url)
    assert person.post("/credits/demo/", allow_redirects=False).status_code == 302
    board = kept_comic(stack, person)
    jobs = []
    for n in range(15):
        box = [0.1 + n * 0.01, 0.2, 0.3, 0.4]
        started = person.post(f"/api/storyboards/{board}/panels/1/touchup/", {"box": box})
        assert started.status_code == 202, started.text
        job = started.json()["job"]
        jobs.append(job)
        assert person.post(f"/api/jobs/{job}/cancel/").status_code == 200
    assert person.get("/api/me/").json()["credits"]["held"] == 0

    def of_the_comic(name: str) -> bool:
        parts = name.split("/")
        job_folder = parts[1] if parts[:2] != ["renders", "touchups"] else parts[2]
        if parts[0] == "renders" and job_folder.isdigit() and int(job_folder) in jobs:
            return True  # its jobs' renders and masks
        roots = ("renders/kept", "pages", "sheets", "places")
        return any(name.startswith(f"{root}/{board}/") for root in roots)

    assert [f for f in files_of(stack) if f.startswith("renders/") and of_the_comic(f)]
    assert person.request("DELETE", f"/api/storyboards/{board}/").status_code == 204
    stack.shell(
        "from datetime import timedelta; from django.utils import timezone;"
        "from mangagen.jobs.retention import prune_ended_job_renders;"
        "prune_ended_job_renders(ended_before=timezone.now() + timedelta(days=2))"
    )
    left = sorted(
        f for f in files_of(stack) if of_the_comic(f) or f.startswith("renders/touchups/")
    )
    assert left == []


# --- strips in flight ----------------------------------------------------------------------

# Six panels (one kept) lettered as heavily as a comic may be: six lines and a caption
# of 300 letters, eight sound effects of 40 letters at the largest size. One strip of
# them is some 1.3 CPU s to draw and reckoned some 2.7 (mangagen/lettering/cost.py);
# the budget fits one strip's estimate and a fifth more.
HEAVY_PANELS = 6
STRIP_BUDGET = 3.4


def heavy_comic(running: Stack, person: Visitor) -> tuple[int, float]:
    """The comic, translated into LANGUAGES (their lines left as the original's), and
    one strip's estimate."""
    made = running.shell(
        "from django.contrib.auth import get_user_model;"
        "from mangagen.pages import builds;"
        "from mangagen.translations.services import save_translation;"
        "from tests.support import factories;"
        f"u = get_user_model().objects.get(username={person.username!r});"
        "words = 'A line of words, heavy to set, as long as a line may be. ' * 6;"
        "line = {'speaker': '', 'text': words[:300]};"
        "boom = {'text': 'KRAKADOOM' * 5, 'x': 0.5, 'y': 0.5, 'size': 0.5, 'angle': 20};"
        "b = factories.storyboard(u, title='Heavy', panels=["
        "{'description': f'Scene {n}.', 'dialogue': [line] * 6, 'caption': words[:300],"
        f" 'sfx': [boom] * 8}} for n in range({HEAVY_PANELS})]);"
        "factories.keep(b, indices=[1]);"
        f"[save_translation(storyboard=b, language=code) for code in {LANGUAGES!r}];"
        "print(b.pk, builds.strip_estimate(builds.comic_of(storyboard=b, language='fr')))"
    )
    board, estimate = made.split()
    return int(board), float(estimate)


def test_eight_strips_asked_for_at_once_draw_at_most_the_budget_and_one_estimate(stack, race):
    person = Visitor(stack.base_url)
    board, estimate = heavy_comic(stack, person)
    print(f"one strip is reckoned {estimate:.2f} CPU s; the budget is {STRIP_BUDGET}")
    assert estimate < STRIP_BUDGET < 2 * estimate
    drawn_before = counted(stack, "mangagen_drawing_cpu_seconds_total")

    def strip(code: str):
        session = requests.Session()
        session.cookies.update(person.http.cookies)
        url = f"{stack.base_url}/api/storyboards/{board}/export/?format=webtoon&lang={code}"
        return lambda: session.get(url, timeout=300)

    results = race([strip(code) for code in LANGUAGES], timeout=300)
    for result in results:
        assert isinstance(result, requests.Response), result
    answers = dict(zip(LANGUAGES, results, strict=True))
    drawn = counted(stack, "mangagen_drawing_cpu_seconds_total") - drawn_before
    statuses = sorted(answer.status_code for answer in answers.values())
    print(f"eight strips at once: {statuses}, {drawn:.2f} CPU s drawn")
    assert len(answers) == len(LANGUAGES)
    for answer in answers.values():
        if answer.status_code == 200:
            assert answer.content[:8] == b"\x89PNG\r\n\x1a\n"
        else:
            assert answer.status_code == 429, answer.text[:300]
            assert answer.json()["error"] == "drawing_budget"
            assert int(answer.headers["Retry-After"]) >= 1
    assert 200 in statuses
    assert drawn <= STRIP_BUDGET + estimate


def test_the_stack_logged_no_crash(stack):
    log = (ROOT / "artifacts" / "hardening-stack.log").read_text()
    assert "Traceback" not in log, log[-3000:]
