"""Time from Generate to panel one, speculation on and off, on the real stack.

Starts daphne, both Celery workers and beat (`manage.py runstack`) on a fresh
database, with the procedural renderer's simulated GPU (a cold start after
idling). Each trial is one person who reaches Review on a cold GPU, reads for
`--dwell` seconds and clicks Generate; the clock runs from the Generate API
call to panel one in hand: its image, when Generate's answer carries it (it
attached to a finished speculation; Review shows it from there), else
`panel.delivered` for panel one on the job's websocket. "On" sends the
Review screen's intent signal after the debounce, "off" does not. Then the
window-shopper run: 20 people reach Review and leave while 2 others generate,
against the same 2 generating alone. Not a test; run it with

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/mangagen REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/ttfp.py
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

import requests
import websocket

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.stack import ROOT, Stack, fresh_database_url, redis_url

PASSWORD = "bench-pass-1234"
PANELS = [
    {"description": "A city at night.", "shot": "establishing"},
    {"description": "Aiko runs.", "shot": "action", "characters": ["Aiko"]},
    {"description": "Kenji waits.", "shot": "medium", "characters": ["Kenji"]},
]


class Person:
    def __init__(
        self, stack: Stack, username: str, storyboard: int, session_key: str | None = None
    ):
        """Signs in through the login form, or with `session_key` (made by
        `setup_people`) arrives already signed in, as a returning person does."""
        self.stack, self.username, self.storyboard = stack, username, storyboard
        self.http = requests.Session()
        self.http.request = functools.partial(self.http.request, timeout=60)  # never hang
        if session_key is not None:
            self.http.cookies.set("sessionid", session_key, domain="127.0.0.1", path="/")
            return
        login = self.http.get(f"{stack.base_url}/accounts/login/")
        login.raise_for_status()
        self.http.post(
            f"{stack.base_url}/accounts/login/",
            data={
                "username": username,
                "password": PASSWORD,
                "csrfmiddlewaretoken": self.http.cookies["csrftoken"],
            },
            headers={"Referer": f"{stack.base_url}/accounts/login/"},
        ).raise_for_status()

    def post(self, path: str, body: dict | None = None) -> requests.Response:
        if "csrftoken" not in self.http.cookies:  # signed in by session: no form seen yet
            self.http.get(f"{self.stack.base_url}/").raise_for_status()
        return self.http.post(
            f"{self.stack.base_url}{path}",
            json=body or {},
            headers={"X-CSRFToken": self.http.cookies["csrftoken"]},
        )

    def reach_review(self, *, speculate: bool, debounce: float) -> int | None:
        """Opens Review and, after the debounce, asks as the page does (with its token).
        The answer is kept in `self.answer`; returns the speculative job, if any."""
        self.http.get(f"{self.stack.base_url}/comics/{self.storyboard}/review/").raise_for_status()
        self.token, self.answer = None, None
        if not speculate:
            return None
        time.sleep(debounce)
        self.token = uuid.uuid4().hex
        self.answer = self.post(
            f"/api/storyboards/{self.storyboard}/speculate/", {"token": self.token}
        ).json()
        return self.answer["job"]

    def leave(self, job: int | None) -> None:
        """Leaves Review as the page's beacons do."""
        if self.token:
            self.post(f"/api/storyboards/{self.storyboard}/speculate/leave/", {"token": self.token})
        if job:
            self.post(f"/api/jobs/{job}/cancel/?if_unconfirmed=1")

    def generate_and_wait(self) -> tuple[float, bool]:
        """Seconds from the Generate call to panel one's image in hand, and whether
        attached. When Generate's answer carries panel one (`delivered`: it attached
        to a finished speculation), the page shows it from there: the clock stops
        when its image has arrived. Otherwise it stops at `panel.delivered` for
        panel one on the job's websocket (the job page's own path)."""
        started = time.monotonic()
        answer = self.post(f"/api/storyboards/{self.storyboard}/generate/").json()
        self.post_seconds = time.monotonic() - started  # the Generate request alone
        first = [p for p in answer.get("delivered", []) if p["index"] == 1]
        if first:
            image = self.http.get(f"{self.stack.base_url}{first[0]['image_url']}")
            image.raise_for_status()
            elapsed = time.monotonic() - started
            self.post(f"/api/jobs/{answer['job']}/cancel/")
            return elapsed, answer["attached"]
        socket = websocket.create_connection(
            f"ws://127.0.0.1:{self.stack.port}/ws/jobs/{answer['job']}/?after=0",
            cookie="; ".join(f"{k}={v}" for k, v in self.http.cookies.items()),
            origin=self.stack.base_url,
            timeout=60,
        )
        try:
            while True:
                if time.monotonic() - started > 120:
                    raise TimeoutError(f"job {answer['job']}: no panel one in 120 s")
                event = json.loads(socket.recv())
                if event["type"] == "panel.failed" and event["data"]["index"] == 1:
                    raise RuntimeError(f"job {answer['job']}: panel one failed: {event['data']}")
                if event["type"] == "panel.delivered" and event["data"]["index"] == 1:
                    elapsed = time.monotonic() - started
                    break
        finally:
            socket.close()
        self.post(f"/api/jobs/{answer['job']}/cancel/")
        return elapsed, answer["attached"]


def setup_people(stack: Stack, count: int, prefix: str) -> list[tuple[str, int, str]]:
    """Makes `count` people with 50 credits and a storyboard each: (username,
    storyboard, a signed-in session key)."""
    code = f"""
from importlib import import_module
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.auth.hashers import make_password
from ledger import services as ledger
from mangagen.storyboards import services as boards
SessionStore = import_module(settings.SESSION_ENGINE).SessionStore
made = []
hashed = make_password("{PASSWORD}")  # once: hashing it for each person takes minutes
for i in range({count}):
    user = get_user_model().objects.create(username="{prefix}" + str(i), password=hashed)
    ledger.grant(account=ledger.account_for(user), amount=50, key="bench-" + user.username,
                 reason="bench")
    board = boards.create_storyboard(owner=user, title="Bench " + str(i))
    boards.update_storyboard(storyboard=board, panels={PANELS!r},
                             characters=[{{"name": "Aiko"}}, {{"name": "Kenji"}}])
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    made.append((user.username, board.pk, session.session_key))
print(made)
"""
    import ast

    return ast.literal_eval(stack.shell(code).strip().splitlines()[-1])


def cold_gpu(stack: Stack) -> None:
    stack.shell("from mangagen.renderers.warmth import GpuPool; GpuPool().reset()")


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-dev-shm-usage",
]

# On Review: the wall-clock time of the click on Generate (captured before the
# page's handler), and of panel one painted there if Review shows it in place
# (Element Timing; Review waits for that paint before it opens the job page).
CLICK_CLOCK = """() => {
  document.getElementById("generate").addEventListener("click", () =>
    sessionStorage.setItem("clicked", String(performance.timeOrigin + performance.now())),
    { capture: true });
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.identifier === "panel-1" && !sessionStorage.getItem("painted")) {
        const at = performance.timeOrigin + (e.renderTime || e.loadTime);
        sessionStorage.setItem("painted", String(at));
      }
    }
  }).observe({ type: "element" });
}"""

# On the job page: milliseconds from that click to panel one's image first
# painted, on Review or on the job page (Element Timing), and where.
PAINTED = """() => new Promise((resolve) => {
  const clicked = Number(sessionStorage.getItem("clicked"));
  const onReview = sessionStorage.getItem("painted");
  if (onReview) return resolve([Number(onReview) - clicked, "review"]);
  const seen = (entries) => {
    for (const e of entries) {
      const at = performance.timeOrigin + (e.renderTime || e.loadTime);
      if (e.identifier === "panel-1") resolve([at - clicked, "job page"]);
    }
  };
  new PerformanceObserver((list) => seen(list.getEntries()))
    .observe({ type: "element", buffered: true });
})"""


def panel_one_state(database_url: str, storyboard: int) -> str | None:
    import psycopg

    with psycopg.connect(database_url.replace("postgres://", "postgresql://", 1)) as conn:
        row = conn.execute(
            "SELECT p.state FROM mangagen_jobpanel p JOIN mangagen_job j ON j.id = p.job_id "
            "WHERE j.storyboard_id = %s AND j.state IN ('queued', 'rendering', "
            "'awaiting_decision') AND p.index = 1",
            (storyboard,),
        ).fetchone()
    return row[0] if row else None


def browser_click_to_paint(stack: Stack, browser, person: Person, *, attached: bool) -> float:
    """Generate clicked in Chromium → panel one painted, in seconds. `attached`: the
    Review page speculated and panel one was ready before the click; otherwise the click
    comes before the debounce (a fresh job on a cold GPU)."""
    context = browser.new_context(base_url=stack.base_url)
    context.add_cookies(
        [{"name": k, "value": v, "url": stack.base_url} for k, v in person.http.cookies.items()]
    )
    page = context.new_page()
    try:
        cold_gpu(stack)
        page.goto(f"/comics/{person.storyboard}/review/")
        page.wait_for_function("() => !document.getElementById('generate').disabled")
        page.evaluate(CLICK_CLOCK)
        if attached:
            page.wait_for_selector("#speculation-hint:not([hidden])", timeout=30_000)
            deadline = time.monotonic() + 60
            while panel_one_state(stack.env["DATABASE_URL"], person.storyboard) != "ready":
                if time.monotonic() > deadline:
                    raise RuntimeError("panel one never became ready")
                time.sleep(0.05)
        page.click("#generate")
        page.wait_for_url("**/jobs/**", timeout=30_000)
        milliseconds, where = page.evaluate(PAINTED)
        if attached and where != "review":
            print("    (panel one was first painted on the job page)", flush=True)
        return milliseconds / 1000
    finally:
        context.close()


def summary(values: list[float]) -> str:
    if not values:
        return "—"
    return f"median {statistics.median(values):5.2f}s  max {max(values):5.2f}s  (n={len(values)})"


def main() -> None:
    parser = argparse.ArgumentParser(description="Time to panel one, speculation on and off.")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--cold-start", type=float, default=4.0)
    parser.add_argument("--render", type=float, default=1.0)
    parser.add_argument("--dwell", type=float, default=6.0)
    parser.add_argument("--debounce", type=float, default=1.5)
    parser.add_argument("--shoppers", type=int, default=20)
    parser.add_argument("--no-browser", action="store_true", help="skip the Chromium figure")
    args = parser.parse_args()

    env = {
        "DATABASE_URL": fresh_database_url("ttfp"),
        "REDIS_URL": redis_url(7),
        "RENDER_COLD_START_SECONDS": str(args.cold_start),
        "RENDER_SECONDS": str(args.render),
        "RENDER_IDLE_SECONDS": "600",
        "SPECULATION_DEBOUNCE_MS": str(int(args.debounce * 1000)),
        "SPECULATION_LOOKAHEAD": "0",
        "SPECULATION_MAX_INFLIGHT": "100",
        "MEDIA_ROOT": str(ROOT / "var" / "ttfp-media"),
        "BEAT_SCHEDULE_FILE": str(ROOT / "var" / "ttfp-celerybeat-schedule"),
    }
    print(
        f"cold start {args.cold_start}s, render {args.render}s, dwell on Review {args.dwell}s, "
        f"{args.trials} trials each; starting the stack…",
        flush=True,
    )
    with Stack(env=env, log=ROOT / "var" / "ttfp-stack.log") as stack:
        people = setup_people(stack, 4 * args.trials + 4 + 2 * args.shoppers, "p")
        results: dict[str, list[float]] = {"on": [], "off": []}
        attached = 0
        for trial in range(args.trials):
            for mode in ("off", "on"):
                username, board, session_key = people.pop()
                person = Person(stack, username, board, session_key)
                cold_gpu(stack)
                person.reach_review(speculate=mode == "on", debounce=args.debounce)
                time.sleep(args.dwell - (args.debounce if mode == "on" else 0))
                elapsed, was_attached = person.generate_and_wait()
                attached += was_attached
                results[mode].append(elapsed)
                print(f"  trial {trial + 1} speculation {mode:>3}: {elapsed:5.2f}s", flush=True)

        print("\nGenerate → panel one in hand (image from the answer, else the websocket)")
        print(f"  speculation off: {summary(results['off'])}")
        print(
            f"  speculation on:  {summary(results['on'])}  ({attached} of {args.trials} attached)"
        )
        ratio = statistics.median(results["off"]) / max(statistics.median(results["on"]), 1e-3)
        print(f"  ratio off/on (median): {ratio:.1f}x faster with speculation")

        if not args.no_browser:
            import shutil

            from playwright.sync_api import sync_playwright

            painted: dict[str, list[float]] = {"attached": [], "cold": []}
            executable = shutil.which("chromium") or shutil.which("chromium-browser")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=executable, headless=True, args=CHROMIUM_ARGS
                )
                for trial in range(args.trials):
                    for mode in ("cold", "attached"):
                        person = Person(stack, *people.pop())
                        seconds = browser_click_to_paint(
                            stack, browser, person, attached=mode == "attached"
                        )
                        painted[mode].append(seconds)
                        print(f"  browser trial {trial + 1} {mode:>8}: {seconds:6.3f}s", flush=True)
                browser.close()
            print("\nGenerate click → panel one painted, in Chromium")
            print(f"  cold (fresh job):        {summary(painted['cold'])}")
            print(f"  attached (panel ready):  {summary(painted['attached'])}")
            browser_ratio = statistics.median(painted["attached"]) / statistics.median(
                painted["cold"]
            )
            print(f"  ratio attached/cold (median): {browser_ratio:.3f} (target <= 0.05)")

        def generators_alone_or_with_shoppers(shoppers: int) -> list[float]:
            cold_gpu(stack)
            makers = [Person(stack, *people.pop()) for _ in range(2)]
            lookers = [Person(stack, *people.pop()) for _ in range(shoppers)]
            times: list[float] = []

            def shop(person: Person) -> None:
                job = person.reach_review(speculate=True, debounce=args.debounce)
                time.sleep(args.dwell / 3)
                person.leave(job)

            def make(person: Person) -> None:
                person.reach_review(speculate=True, debounce=args.debounce)
                time.sleep(args.dwell - args.debounce)
                times.append(person.generate_and_wait()[0])

            threads = [threading.Thread(target=shop, args=(p,)) for p in lookers]
            threads += [threading.Thread(target=make, args=(p,)) for p in makers]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            return times

        alone = generators_alone_or_with_shoppers(0)
        crowded = generators_alone_or_with_shoppers(args.shoppers)
        print(f"\nWindow shoppers ({args.shoppers} reach Review and leave while 2 generate)")
        print(f"  2 generating alone:          {summary(alone)}")
        print(f"  2 generating among shoppers: {summary(crowded)}")
        slowdown = statistics.median(crowded) / max(statistics.median(alone), 1e-3)
        print(f"  ratio shoppers/alone (median): {slowdown:.2f}x (target <= 1.1)")
        leftover = stack.shell(
            "from ledger.selectors import reconciliation;"
            "print([m for m in reconciliation() if m.kind != 'stale_hold'])"
        ).strip()
        print(f"\nledger after the run: {'all reconciled' if leftover == '[]' else leftover}")


if __name__ == "__main__":
    main()
