"""Load in the real world's shape, time-scaled to a couple of minutes, on the real stack.

People arrive over time (a Poisson process over `--over` seconds), signed in
already (as returning people are: a session made at setup, so that 200
password hashes do not crowd into the arrival window). Each one opens
Review, asks to speculate after the debounce (with the page's token), reads
for a dwell drawn from a skewed (log-normal) distribution around the GPU's
cold start, and then either clicks Generate — waiting for panel one as the
page gets it: its image, fetched from Generate's answer when it attached to a
finished speculation, else `panel.delivered` on the job's websocket — or
leaves (the page's beacons).
The GPU is the procedural renderer's pool of GPU_POOL_SIZE containers, each
with its own cold start after idling; or, with `--provider replicate`,
RENDERER=replicate against the Replicate stand-in (tests/support/providers/
replicate.py): GPU_POOL_SIZE workers that boot `--cold-start` seconds (4 by
default) after idling, where a render withdrawn is cancelled at the provider.

Prints: Generate → panel one p50/p95 for attached and fresh jobs (and their
ratios); the same for people whose dwell exceeded the predicted finish (with
the provider, against 15 % of its cold start and render); the share attached;
the hit rate; speculative renders wasted per abandoned Review; declines by
reason; with the provider, its time spent and what cancelling saved (by the
stand-in's own count and by the app's estimate); whether the ledger
reconciles. Not a test; run it (under the lock others' stacks share) with

    flock /tmp/mangagen-e2e.lock env DATABASE_URL=postgres://postgres@127.0.0.1:5432/mangagen \\
        REDIS_URL=redis://127.0.0.1:6379/0 .venv/bin/python bench/load.py --people 200
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import faulthandler
import math
import random
import signal
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.providers.replicate import ReplicateStandIn
from tests.support.stack import ROOT, Stack, fresh_database_url, redis_url
from tests.support.visits import Person, setup_people


@dataclass
class Visit:
    username: str
    board: int
    session_key: str
    arrive: float
    dwell: float
    generates: bool
    quick: bool = False
    speculated_job: int | None = None
    reason: str | None = None
    predicted: float | None = None
    ttfp: float | None = None
    post: float | None = None  # of which the Generate request
    attached: bool | None = None
    error: str | None = None


@dataclass
class Results:
    lock: threading.Lock = field(default_factory=threading.Lock)
    visits: list[Visit] = field(default_factory=list)


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def line(label: str, values: list[float]) -> str:
    if not values:
        return f"  {label:<44} —"
    p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
    return f"  {label:<44} p50 {p50:6.3f}s  p95 {p95:6.3f}s  (n={len(values)})"


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}" if a is not None and b else "—"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=200)
    parser.add_argument("--over", type=float, default=90.0, help="seconds of arrivals")
    parser.add_argument("--generate", type=float, default=0.5, help="share who generate")
    parser.add_argument(
        "--quick", type=float, default=0.1, help="share of generators who click before the debounce"
    )
    parser.add_argument(
        "--provider",
        choices=["procedural", "replicate"],
        default="procedural",
        help="the simulated GPU, or RENDERER=replicate against the Replicate stand-in",
    )
    parser.add_argument("--cold-start", type=float, default=None, help="8; 4 for replicate")
    parser.add_argument("--render", type=float, default=1.0)
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--pool", type=int, default=4, help="GPU_POOL_SIZE")
    parser.add_argument(
        "--web", type=int, default=2, help="WEB_PROCESSES: daphne processes (two per core)"
    )
    parser.add_argument("--debounce", type=float, default=0.5)
    parser.add_argument("--lookahead", type=int, default=1)
    parser.add_argument(
        "--dwell-spread", type=float, default=0.8, help="sigma of the log-normal dwell"
    )
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.cold_start is None:
        args.cold_start = 4.0 if args.provider == "replicate" else 8.0
    rng = random.Random(args.seed)
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # kill -USR1: where is everyone?

    env = {
        "DATABASE_URL": fresh_database_url("load"),
        "REDIS_URL": redis_url(8),
        "GPU_POOL_SIZE": str(args.pool),
        "WEB_PROCESSES": str(args.web),
        "GPU_POOL_PREFIX": f"load:{int(time.time())}",
        "RENDER_COLD_START_SECONDS": str(args.cold_start),
        "RENDER_SECONDS": str(args.render),
        "RENDER_IDLE_SECONDS": str(args.idle),
        "SPECULATION_DEBOUNCE_MS": str(int(args.debounce * 1000)),
        "SPECULATION_LOOKAHEAD": str(args.lookahead),
        # The prior dwell, scaled like the rest of time here (30 s against a 20 s cold start).
        "SPECULATION_DWELL_PRIOR_SECONDS": str(args.cold_start * 1.5),
        # Every simulated person is a distinct, honest newcomer.
        "SPECULATION_UNPROVEN_SHARE": "100",
        "SPECULATION_MAX_INFLIGHT": "200",
        # Threads only wait, but each opens a database connection for its short
        # transactions: stay well inside PostgreSQL's max_connections (shared here).
        "RENDER_CONCURRENCY": "16",
        "SPECULATIVE_CONCURRENCY": "16",
        "THROTTLE_SPECULATE": "1000/min",
        "THROTTLE_GENERATE": "1000/min",
        "MEDIA_ROOT": str(ROOT / "var" / "load-media"),
        "BEAT_SCHEDULE_FILE": str(ROOT / "var" / "load-celerybeat-schedule"),
    }
    median_dwell = args.cold_start * 1.2
    print(
        f"{args.people} people arriving over {args.over:.0f}s; GPU pool of {args.pool}, "
        f"cold start {args.cold_start}s, render {args.render}s; dwell log-normal around "
        f"{median_dwell:.1f}s; {args.generate:.0%} generate; {args.web} web processes."
        " Starting the stack…",
        flush=True,
    )
    results = Results()
    with contextlib.ExitStack() as running:
        provider = None
        if args.provider == "replicate":
            provider = running.enter_context(
                ReplicateStandIn(
                    cold_boot=args.cold_start,
                    render=args.render,
                    capacity=args.pool,
                    idle=args.idle,
                )
            )
            env |= provider.environment()
        stack = running.enter_context(Stack(env=env, log=ROOT / "var" / "load-stack.log"))
        people = setup_people(stack, args.people, "load")
        clock = 0.0
        for username, board, session_key in people:
            clock += rng.expovariate(args.people / args.over)
            dwell = min(max(rng.lognormvariate(math.log(median_dwell), args.dwell_spread), 1), 120)
            generates = rng.random() < args.generate
            quick = generates and rng.random() < args.quick
            results.visits.append(
                Visit(username, board, session_key, clock, dwell, generates, quick)
            )

        def visit(v: Visit, start: float) -> None:
            time.sleep(max(0.0, start + v.arrive - time.monotonic()))
            try:
                person = Person(stack, v.username, v.board, v.session_key)
                job = person.reach_review(speculate=not v.quick, debounce=args.debounce)
                asked = time.monotonic()
                answer = person.answer or {}
                v.speculated_job, v.reason = job, answer.get("reason")
                v.predicted = answer.get("predicted_seconds")
                time.sleep(max(0.0, v.dwell - (time.monotonic() - asked)))
                if v.generates:
                    v.ttfp, v.attached = person.generate_and_wait()
                    v.post = person.post_seconds
                else:
                    person.leave(job)
            except Exception as exc:  # counted, never fatal to the run
                v.error = f"{v.username}: {type(exc).__name__}: {exc}"[:200]

        start = time.monotonic()
        threads = [threading.Thread(target=visit, args=(v, start)) for v in results.visits]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=args.over + 300)
        elapsed = time.monotonic() - start

        figures = stack.shell(
            "from django.db.models import Count;"
            "from mangagen.jobs.models import Job, JobEvent, JobPanel;"
            "from speculation.models import Speculation;"
            "never = Job.objects.filter(confirmed=False);"
            "done = JobPanel.objects.filter(job__in=never, rendered_at__isnull=False).count();"
            "cut = JobEvent.objects.filter(job__in=never, type='panel.discarded').count();"
            "print(dict(Speculation.objects.values_list('outcome').annotate(n=Count('pk'))));"
            "print(done + cut);"
            "rows = JobPanel.objects.filter(index=1, delivered_at__isnull=False,"
            " job__confirmed_at__isnull=False).values_list("
            "'job__speculation__outcome', 'job__confirmed_at', 'delivered_at');"
            "print([(o == 'hit', (d - c).total_seconds()) for o, c, d in rows])"
        ).strip()
        outcomes_text, wasted_text, server_text = figures.splitlines()[-3:]
        estimated = stack.shell(
            "from django.db.models import Count, Sum;"
            "from mangagen.jobs.models import RenderAttempt;"
            "print(RenderAttempt.objects.filter(outcome='cancelled_at_provider')"
            ".aggregate(n=Count('pk'), s=Sum('provider_seconds_saved')))"
        ).strip()
        problems = stack.shell(
            "from ledger.selectors import reconciliation;"
            "print([m for m in reconciliation() if m.kind != 'stale_hold'])"
        ).strip()

    visits = results.visits
    errors = [v.error for v in visits if v.error]
    generators = [v for v in visits if v.generates and v.ttfp is not None]
    attached = [v.ttfp for v in generators if v.attached]
    fresh = [v.ttfp for v in generators if not v.attached]
    stayed = [
        v.ttfp
        for v in generators
        if v.attached and v.predicted is not None and v.dwell > v.predicted
    ]
    left = [v for v in visits if not v.generates and not v.error]
    outcomes = ast.literal_eval(outcomes_text)
    started = sum(n for o, n in outcomes.items() if o != "declined")
    declines = Counter(v.reason for v in visits if v.reason)

    print(f"\n{len(visits)} people in {elapsed:.1f}s; errors: {len(errors)}")
    for error in errors[:5]:
        print(f"    {error}")
    print("\nGenerate → panel one")
    print(line("attached", attached))
    print(line("fresh", fresh))
    a50, a95 = percentile(attached, 0.5), percentile(attached, 0.95)
    f50, f95 = percentile(fresh, 0.5), percentile(fresh, 0.95)
    print(f"  attached/fresh: p50 {ratio(a50, f50)}  p95 {ratio(a95, f95)}  (target <= 1)")
    print(
        line("of which the Generate request, attached", [v.post for v in generators if v.attached])
    )
    print(
        line("of which the Generate request, fresh", [v.post for v in generators if not v.attached])
    )
    server = ast.literal_eval(server_text)
    print(line("server side: confirm → delivered, attached", [t for a, t in server if a]))
    print(line("server side: confirm → delivered, fresh", [t for a, t in server if not a]))
    print(line("attached, dwell > predicted finish", stayed))
    s95 = percentile(stayed, 0.95)
    verdict = "—" if s95 is None else ("met" if s95 <= 0.3 else "missed")
    print(f"  target p95 <= 0.300s for those who stayed long enough: {verdict}")
    if provider is not None:
        bound = 0.15 * (args.cold_start + args.render)
        verdict = "—" if s95 is None else ("met" if s95 <= bound else "missed")
        print(
            f"  target p95 <= 15% of cold start + render = {bound:.3f}s "
            f"for those who stayed long enough: {verdict}"
        )
    share = len(attached) / len(generators) if generators else 0
    print(f"\n  share attached: {share:.0%} of {len(generators)} who generated")
    hits = outcomes.get("hit", 0)
    print(f"  hit rate: {hits}/{started} = {hits / started:.0%}" if started else "  hit rate: —")
    wasted = int(wasted_text)
    per = wasted / len(left) if left else 0
    print(
        f"  speculative renders wasted: {wasted} for {len(left)} abandoned Reviews = "
        f"{per:.2f} each (target <= 1 + look-ahead = {1 + args.lookahead})"
    )
    print(f"  declines by reason: {dict(declines)}")
    if provider is not None:
        cancelled = provider.cancelled()
        app = ast.literal_eval(estimated.splitlines()[-1])
        print(f"\nThe provider (Replicate stand-in, {args.pool} workers, {args.cold_start}s boots)")
        print(
            f"  predictions: {len(provider.predictions)}, cold boots: {provider.boots()}, "
            f"provider seconds spent: {provider.spent_seconds():.1f} (boots and renders)"
        )
        print(
            f"  cancelled at the provider: {len(cancelled)} renders nobody would see, "
            f"sparing {sum(p.saved for p in cancelled):.1f} provider seconds "
            f"(the app's estimate: {app['n']} renders, {app['s'] or 0:.1f} s)"
        )
    print(f"  speculation outcomes: {outcomes}")
    print(f"  ledger after the run: {'all reconciled' if problems == '[]' else problems}")


if __name__ == "__main__":
    main()
