"""Checked before shown, measured: people through Generate with and without the judge.

Starts the whole stack (daphne, both Celery workers, beat: `manage.py runstack`) twice on
fresh databases, with the procedural renderer's simulated GPU: once with JUDGE=none,
once with JUDGE=openai against the chat stand-in (tests/support/providers/
openai_compatible.py `ChatStandIn`), which takes `--judge-seconds` to answer and scores
a `--reject` share of renders 0.2 (under JUDGE_MIN_SCORE: drawn again) and the rest 0.9.
On each, `--trials` people click Generate on a fresh comic (panel one drawn after the
click) and as many read Review for `--dwell` seconds with the speculation signal first
(panel one drawn, and judged, while they read). The clock runs from the Generate call
to panel one in hand, as bench/ttfp.py times it. Prints the judge's acceptance rate,
the redraws per panel shown and the credits each panel shown cost, side by side.
Not a test; run it under the lock benchmarks that start a stack share:

    flock /tmp/mangagen-e2e.lock env REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/judge.py [--trials 4] [--reject 0.3]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import requests
from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ttfp import summary
from tests.support.providers.openai_compatible import ChatStandIn
from tests.support.stack import ROOT, Stack, fresh_database_url, redis_url
from tests.support.visits import Person, setup_people

METRICS_TOKEN = "judge-bench-metrics"


class RejectingJudge(ChatStandIn):
    """The chat stand-in scoring a `reject` share of renders low, at random (seeded)."""

    def __init__(self, *, reject: float, seconds: float, seed: int = 36) -> None:
        super().__init__()
        self.reject, self.rng = reject, random.Random(seed)
        self.delay = seconds

    def completions(self, request):
        with self.lock:
            self.scores.append(0.2 if self.rng.random() < self.reject else 0.9)
        return super().completions(request)


def counted(stack: Stack) -> dict[str, float]:
    """The judge's families in /metrics (summed over the stack's processes)."""
    answer = requests.get(
        f"{stack.base_url}/metrics",
        headers={"Authorization": f"Bearer {METRICS_TOKEN}"},
        timeout=10,
    )
    answer.raise_for_status()
    found: dict[str, float] = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            if sample.name == "mangagen_judge_total":
                found[sample.labels["verdict"]] = sample.value
            elif sample.name in ("mangagen_judge_redraws_total", "mangagen_judge_seconds_sum"):
                found[sample.name] = sample.value
    return found


def spent(person: Person) -> int:
    me = person.http.get(f"{person.stack.base_url}/api/me/").json()["credits"]
    return 50 - me["available"] - me["held"]


def run(args, *, judge: ChatStandIn | None) -> dict:
    name = "judged" if judge else "plain"
    env = {
        "DATABASE_URL": fresh_database_url(f"judge_bench_{name}"),
        "REDIS_URL": redis_url(7),
        "GPU_POOL_PREFIX": f"judge-bench-{name}",
        "SPECULATION_LOOKAHEAD": "0",
        "SPECULATION_MIN_CHANCE": "0",
        "SPECULATION_MAX_INFLIGHT": "100",
        "SPECULATION_DEBOUNCE_MS": str(int(args.debounce * 1000)),
        "RENDER_COLD_START_SECONDS": str(args.cold_start),
        "RENDER_SECONDS": str(args.render),
        "RENDER_IDLE_SECONDS": "600",
        "METRICS_TOKEN": METRICS_TOKEN,
        "MEDIA_ROOT": str(ROOT / "var" / "judge-bench-media"),
        "BEAT_SCHEDULE_FILE": str(ROOT / "var" / "judge-bench-celerybeat-schedule"),
    }
    env |= judge.environment() if judge else {"JUDGE": "none"}
    print(f"\n{name}: starting the stack…", flush=True)
    times: dict[str, list[float]] = {"fresh": [], "attached": []}
    costs: list[int] = []
    attached = 0
    with Stack(env=env, log=ROOT / "var" / f"judge-bench-{name}.log") as stack:
        stack.shell("from mangagen.renderers.gpu_pool import GpuPool; GpuPool().reset()")
        people = setup_people(stack, 2 * args.trials, name)
        for trial in range(args.trials):
            for mode in ("fresh", "attached"):
                person = Person(stack, *people.pop())
                person.reach_review(speculate=mode == "attached", debounce=args.debounce)
                if mode == "attached":
                    time.sleep(max(0.0, args.dwell - args.debounce))
                elapsed, was_attached = person.generate_and_wait()
                attached += was_attached
                times[mode].append(elapsed)
                costs.append(spent(person))
                print(f"  {name} trial {trial + 1} {mode:>8}: {elapsed:5.2f}s", flush=True)
        verdicts = counted(stack)
        leftover = stack.shell(
            "from ledger.selectors import reconciliation;"
            "print([m for m in reconciliation() if m.kind != 'stale_hold'])"
        ).strip()
    return {
        "times": times,
        "attached": attached,
        "costs": costs,
        "verdicts": verdicts,
        "ledger": "all reconciled" if leftover == "[]" else leftover,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Generate with and without the judge.")
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--reject", type=float, default=0.3, help="share of renders scored low")
    parser.add_argument("--judge-seconds", type=float, default=0.5, help="the judge's answer")
    parser.add_argument("--cold-start", type=float, default=2.0)
    parser.add_argument("--render", type=float, default=1.0)
    parser.add_argument("--dwell", type=float, default=8.0, help="seconds on Review")
    parser.add_argument("--debounce", type=float, default=1.5)
    args = parser.parse_args()
    print(
        f"simulated GPU: cold start {args.cold_start}s, render {args.render}s; judge answers "
        f"in {args.judge_seconds}s and rejects {args.reject:.0%}; dwell on Review "
        f"{args.dwell}s; {args.trials} trials each",
        flush=True,
    )
    plain = run(args, judge=None)
    with RejectingJudge(reject=args.reject, seconds=args.judge_seconds) as judge:
        judged = run(args, judge=judge)
        asked = len(judge.made)

    v = judged["verdicts"]
    checked = sum(v.get(k, 0) for k in ("passed", "redrawn", "kept_low"))
    shown = len(judged["costs"])
    print("\nThe judge")
    print(f"  verdicts: { ({k: int(n) for k, n in v.items() if not k.startswith('mangagen')}) }")
    print(f"  asked {asked} times; acceptance at once: {v.get('passed', 0) / max(checked, 1):.0%}")
    redraws = v.get("mangagen_judge_redraws_total", 0)
    print(f"  redraws per panel shown: {redraws / max(shown, 1):.2f} ({int(redraws)} / {shown})")
    print(
        "  credits per panel shown: "
        f"{sum(judged['costs']) / max(shown, 1):.2f} judged, "
        f"{sum(plain['costs']) / max(len(plain['costs']), 1):.2f} without"
    )
    print("\nGenerate → panel one in hand (image from the answer, else the websocket)")
    for mode in ("fresh", "attached"):
        print(f"  {mode:>8}, no judge: {summary(plain['times'][mode])}")
        print(f"  {mode:>8}, judged:   {summary(judged['times'][mode])}")
    print(
        f"  attached: {plain['attached']} of {args.trials} without the judge, "
        f"{judged['attached']} of {args.trials} with it"
    )
    print(f"\nledger after the runs: {plain['ledger']}; {judged['ledger']}")


if __name__ == "__main__":
    main()
