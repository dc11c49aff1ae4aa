"""Load: many people at once on the real stack, and the ledger checked afterwards.

Each simulated person signs in, opens Review, (mostly) sends the speculation
signal after the debounce, reads for a while, and then either generates —
waiting for panel one on the websocket — or leaves. Reports requests per
second, errors, time from Generate to panel one for attached and fresh jobs,
the speculation hit rate, and whether the ledger reconciles after the run.
Not a test; run it with

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/mangagen REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/load.py --people 200
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.stack import ROOT, Stack, fresh_database_url, redis_url
from bench.ttfp import Person, setup_people


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = 0
        self.errors: list[str] = []
        self.attached: list[float] = []
        self.fresh: list[float] = []
        self.left = 0

    def add(self, **kwargs):
        with self.lock:
            for key, value in kwargs.items():
                current = getattr(self, key)
                if isinstance(current, list):
                    current.append(value)
                else:
                    setattr(self, key, current + value)


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=40)
    parser.add_argument("--generate", type=float, default=0.4, help="share who generate")
    parser.add_argument("--signal", type=float, default=0.8, help="share whose Review speculates")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    env = {
        "DATABASE_URL": fresh_database_url("load"),
        "REDIS_URL": redis_url(8),
        "RENDER_COLD_START_SECONDS": "2",
        "RENDER_SECONDS": "0.5",
        "RENDER_IDLE_SECONDS": "600",
        "SPECULATION_DEBOUNCE_MS": "500",
        "SPECULATION_LOOKAHEAD": "0",
        "RENDER_CONCURRENCY": "2",
        "THROTTLE_SPECULATE": "1000/min",
        "THROTTLE_GENERATE": "1000/min",
        "MEDIA_ROOT": str(ROOT / "var" / "load-media"),
        "BEAT_SCHEDULE_FILE": str(ROOT / "var" / "load-celerybeat-schedule"),
    }
    counters = Counters()
    print(f"{args.people} people, {args.concurrency} at a time; starting the stack…", flush=True)
    with Stack(env=env, log=ROOT / "var" / "load-stack.log") as stack:
        people = setup_people(stack, args.people, "load")
        plans = [
            (
                username,
                board,
                rng.random() < args.signal,
                rng.random() < args.generate,
                rng.uniform(1, 4),
            )
            for username, board in people
        ]

        def visit(plan):
            username, board, signals, generates, dwell = plan
            try:
                person = Person(stack, username, board)
                counters.add(requests=3)
                job = person.reach_review(speculate=signals, debounce=0.5)
                counters.add(requests=1 + signals)
                time.sleep(dwell)
                if generates:
                    elapsed, attached = person.generate_and_wait()
                    counters.add(requests=2)
                    counters.add(**({"attached": elapsed} if attached else {"fresh": elapsed}))
                else:
                    person.leave(job)
                    counters.add(requests=1 if job else 0, left=1)
            except Exception as exc:  # counted, never fatal to the run
                counters.add(errors=f"{username}: {type(exc).__name__}: {exc}"[:200])

        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
            list(pool.map(visit, plans))
        elapsed = time.monotonic() - started

        outcomes = stack.shell(
            "from django.db.models import Count;"
            "from speculation.models import Speculation;"
            "print(dict(Speculation.objects.values_list('outcome').annotate(n=Count('pk'))))"
        ).strip()
        problems = stack.shell(
            "from ledger.selectors import reconciliation;"
            "print([m for m in reconciliation() if m.kind != 'stale_hold'])"
        ).strip()

    print(f"\n{args.people} people in {elapsed:.1f}s")
    print(f"  requests: {counters.requests} ({counters.requests / elapsed:.1f}/s)")
    print(f"  errors:   {len(counters.errors)}")
    for error in counters.errors[:5]:
        print(f"    {error}")
    for label, values in (("attached", counters.attached), ("fresh", counters.fresh)):
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        shown = f"p50 {p50:.2f}s  p95 {p95:.2f}s" if values else "—"
        print(f"  Generate → panel one, {label:>8} (n={len(values):>3}): {shown}")
    print(f"  speculation outcomes: {outcomes}")
    generated = len(counters.attached) + len(counters.fresh)
    print(f"  generated {generated}, left {counters.left}")
    print(f"  ledger after the run: {'all reconciled' if problems == '[]' else problems}")
    if counters.attached or counters.fresh:
        all_times = counters.attached + counters.fresh
        print(f"  overall median to panel one: {statistics.median(all_times):.2f}s")


if __name__ == "__main__":
    main()
