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
against the same 2 generating alone.

`--provider replicate` runs the same with RENDERER=replicate against the
Replicate stand-in (its workers boot `--cold-start` seconds, render
`--render`); `--defaults` runs on `make run`'s settings (20 s cold start, 2 s
renders) with 26 s on Review. Not a test; run it with

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/mangagen REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/ttfp.py [--provider replicate] [--defaults] [--parts browser]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.providers.replicate import ReplicateStandIn
from tests.support.stack import ROOT, Stack, fresh_database_url, redis_url
from tests.support.visits import Person, setup_people


def cold_gpu(stack: Stack, provider: ReplicateStandIn | None = None) -> None:
    """Every container cold: the pool's, and the provider stand-in's workers."""
    stack.shell("from mangagen.renderers.gpu_pool import GpuPool; GpuPool().reset()")
    if provider is not None:
        provider.fleet.cool()


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
  // Where the click's time goes: the Generate request and panel one's image, as fetched.
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const generate = e.name.includes("/generate/");
      const what = generate ? "generate" : e.name.includes("/renders/") ? "image" : null;
      const server = Math.round(e.responseStart - e.requestStart);
      if (what) sessionStorage.setItem(what, `${Math.round(e.duration)} ms (server ${server})`);
    }
  }).observe({ type: "resource" });
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


def browser_click_to_paint(
    stack: Stack,
    browser,
    person: Person,
    *,
    attached: bool,
    dwell: float,
    provider: ReplicateStandIn | None = None,
) -> float:
    """Generate clicked in Chromium → panel one painted, in seconds. `attached`: the
    person read Review for `dwell` seconds (longer if panel one was not ready by then),
    the page speculated and panel one was ready before the click; otherwise the click
    comes before the debounce (a fresh job on a cold GPU)."""
    context = browser.new_context(base_url=stack.base_url)
    context.add_cookies(
        [{"name": k, "value": v, "url": stack.base_url} for k, v in person.http.cookies.items()]
    )
    page = context.new_page()
    try:
        cold_gpu(stack, provider)
        page.goto(f"/comics/{person.storyboard}/review/")
        arrived = time.monotonic()
        page.wait_for_function("() => !document.getElementById('generate').disabled")
        page.evaluate(CLICK_CLOCK)
        if attached:
            page.wait_for_selector("#speculation-hint:not([hidden])", timeout=30_000)
            deadline = time.monotonic() + 60
            while panel_one_state(stack.env["DATABASE_URL"], person.storyboard) != "ready":
                if time.monotonic() > deadline:
                    raise RuntimeError("panel one never became ready")
                time.sleep(0.05)
            time.sleep(max(0.0, arrived + dwell - time.monotonic()))  # still reading
        page.click("#generate")
        page.wait_for_url("**/jobs/**", timeout=30_000)
        milliseconds, where = page.evaluate(PAINTED)
        spent = page.evaluate(
            "() => ['generate', 'image'].map((k) => `${k} ${sessionStorage.getItem(k)}`)"
        )
        print(f"    ({'; '.join(spent)})", flush=True)
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
    parser.add_argument("--dwell", type=float, default=None, help="seconds on Review (6; 26)")
    parser.add_argument("--debounce", type=float, default=1.5)
    parser.add_argument("--shoppers", type=int, default=20)
    parser.add_argument(
        "--provider",
        choices=["procedural", "replicate"],
        default="procedural",
        help="the simulated GPU, or RENDERER=replicate against the Replicate stand-in "
        "(tests/support/providers/replicate.py) with --cold-start and --render",
    )
    parser.add_argument(
        "--defaults",
        action="store_true",
        help="make run's settings (a 20 s cold start, 2 s renders, the 1.5 s debounce) and "
        "26 s on Review: only --provider, --trials and --parts apply",
    )
    parser.add_argument(
        "--parts", default="api,browser,shoppers", help="which figures: api,browser,shoppers"
    )
    parser.add_argument("--no-browser", action="store_true", help="skip the Chromium figure")
    args = parser.parse_args()
    parts = set(args.parts.split(",")) - ({"browser"} if args.no_browser else set())
    if args.defaults:
        args.cold_start, args.render, args.debounce = 20.0, 2.0, 1.5
    args.dwell = args.dwell or (26.0 if args.defaults else 6.0)

    env = {
        "DATABASE_URL": fresh_database_url("ttfp"),
        "REDIS_URL": redis_url(7),
        "SPECULATION_LOOKAHEAD": "0",
        "SPECULATION_MAX_INFLIGHT": "100",
        "MEDIA_ROOT": str(ROOT / "var" / "ttfp-media"),
        "BEAT_SCHEDULE_FILE": str(ROOT / "var" / "ttfp-celerybeat-schedule"),
    }
    if not args.defaults:
        env |= {
            "RENDER_COLD_START_SECONDS": str(args.cold_start),
            "RENDER_SECONDS": str(args.render),
            "RENDER_IDLE_SECONDS": "600",
            "SPECULATION_DEBOUNCE_MS": str(int(args.debounce * 1000)),
        }
    print(
        f"{args.provider}{' (make run defaults)' if args.defaults else ''}: cold start "
        f"{args.cold_start}s, render {args.render}s, dwell on Review {args.dwell}s, "
        f"{args.trials} trials each; starting the stack…",
        flush=True,
    )
    with contextlib.ExitStack() as running:
        provider = None
        if args.provider == "replicate":
            provider = running.enter_context(
                ReplicateStandIn(cold_boot=args.cold_start, render=args.render, idle=600)
            )
            env |= provider.environment()
        stack = running.enter_context(Stack(env=env, log=ROOT / "var" / "ttfp-stack.log"))
        people = setup_people(stack, 4 * args.trials + 4 + 2 * args.shoppers, "p")
        if "api" in parts:
            api_figures(stack, provider, people, args)
        if "browser" in parts:
            browser_figures(stack, provider, people, args)
        if "shoppers" in parts:
            shopper_figures(stack, provider, people, args)
        if provider is not None:
            print(
                f"\nthe Replicate stand-in: {len(provider.predictions)} predictions, "
                f"{provider.boots()} cold boots, {len(provider.cancelled())} cancelled"
            )
        leftover = stack.shell(
            "from ledger.selectors import reconciliation;"
            "print([m for m in reconciliation() if m.kind != 'stale_hold'])"
        ).strip()
        print(f"\nledger after the run: {'all reconciled' if leftover == '[]' else leftover}")


def api_figures(stack: Stack, provider, people: list, args) -> None:
    """Generate → panel one in hand over the API, speculation off and on."""
    results: dict[str, list[float]] = {"on": [], "off": []}
    attached = 0
    for trial in range(args.trials):
        for mode in ("off", "on"):
            username, board, session_key = people.pop()
            person = Person(stack, username, board, session_key)
            cold_gpu(stack, provider)
            person.reach_review(speculate=mode == "on", debounce=args.debounce)
            time.sleep(args.dwell - (args.debounce if mode == "on" else 0))
            elapsed, was_attached = person.generate_and_wait()
            attached += was_attached
            results[mode].append(elapsed)
            print(f"  trial {trial + 1} speculation {mode:>3}: {elapsed:5.2f}s", flush=True)

    print("\nGenerate → panel one in hand (image from the answer, else the websocket)")
    print(f"  speculation off: {summary(results['off'])}")
    print(f"  speculation on:  {summary(results['on'])}  ({attached} of {args.trials} attached)")
    ratio = statistics.median(results["off"]) / max(statistics.median(results["on"]), 1e-3)
    print(f"  ratio off/on (median): {ratio:.1f}x faster with speculation")


def browser_figures(stack: Stack, provider, people: list, args) -> None:
    """Generate click → panel one painted in Chromium: attached against a fresh job."""
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
                    stack,
                    browser,
                    person,
                    attached=mode == "attached",
                    dwell=args.dwell,
                    provider=provider,
                )
                painted[mode].append(seconds)
                print(f"  browser trial {trial + 1} {mode:>8}: {seconds:6.3f}s", flush=True)
        browser.close()
    print("\nGenerate click → panel one painted, in Chromium")
    print(f"  cold (fresh job):        {summary(painted['cold'])}")
    print(f"  attached (panel ready):  {summary(painted['attached'])}")
    worst = max(painted["attached"])
    print(f"  attached, slowest: {worst * 1000:.0f} ms (target <= 150 ms)")
    ratio = statistics.median(painted["attached"]) / statistics.median(painted["cold"])
    print(f"  ratio attached/cold (median): {ratio:.3f} (target <= 0.05)")


def shopper_figures(stack: Stack, provider, people: list, args) -> None:
    """20 window shoppers reach Review and leave while 2 people generate, against the
    same 2 alone."""

    def generators_alone_or_with_shoppers(shoppers: int) -> list[float]:
        cold_gpu(stack, provider)
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


if __name__ == "__main__":
    main()
