"""Rough pages under a crowd shaped like the world, side by side with and without roughs.

Starts daphne, both Celery workers and beat (`manage.py runstack`) on a fresh database
with RENDERER=replicate against the Replicate stand-in (tests/support/providers/
replicate.py: real HTTP, each model on a fleet of its own whose workers boot
`--cold-start` seconds after idling): the draft model (FLUX schnell) draws a rough in
`--rough` seconds (0.3), the final model (FLUX dev, also the img2img a final from its
rough goes to) in `--final` seconds (3); GPU_POOL_SIZE 4. Both fleets are warmed first
(a warm provider).

People arrive over time (exponential gaps, `--gap` seconds on average), each with a
12-panel comic, read Review for a skewed time (log-normal, median `--read` seconds, a
few for much longer) and click Generate. With roughs, Review asks for them when it
settles (as the page does, before speculation) and shows each page as its roughs land;
without, it only speculates. Printed side by side from one run:

- Review settled → every rough shown: all of the comic's roughs ready, then its rough
  pages fetched (GET pages/?rough=1 and each page image), p50/p95: `--solo` visits one
  at a time first (nobody else drawing), then in the crowd (roughs wait behind the
  finals of the people who came before: the pool serves them last);
- Generate → panel one in hand (attached to the speculation), with and without roughs;
- the GPU seconds roughs cost (the stand-in's own: boots and processing, per model) as a
  share of the finals', and the share of finals drawn from a rough.

Not a test; run it with

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/mangagen REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/roughs.py [--people 8] [--gap 3] [--read 12]
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.providers.replicate import ReplicateStandIn
from tests.support.stack import ROOT, Stack, stack
from tests.support.visits import Person, setup_people

DRAFT = "black-forest-labs/flux-schnell"
FINAL = "black-forest-labs/flux-dev"
DEBOUNCE = 1.5
# A 12-panel comic: two people in varied shots, some of them speaking.
SHOTS = ["establishing", "medium", "close-up", "wide", "medium", "action"]
PANELS = [
    {
        "description": f"Aiko and Kenji, beat {n} of the chase.",
        "shot": SHOTS[n % len(SHOTS)],
        "characters": ["Aiko", "Kenji"] if n % 3 else ["Aiko"],
        "dialogue": [{"speaker": "Aiko", "text": f"Line {n}!"}] if n % 2 else [],
    }
    for n in range(1, 13)
]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def spread(values: list[float]) -> str:
    if not values:
        return "—"
    return (
        f"p50 {statistics.median(values):5.2f}s  p95 {percentile(values, 0.95):5.2f}s  "
        f"max {max(values):5.2f}s  (n={len(values)})"
    )


class Visit:
    """One person's visit: Review settled, roughs (or not), reading, Generate."""

    def __init__(self, person: Person, *, roughs: bool, read: float):
        self.person, self.roughs, self.read = person, roughs, read
        self.shown: float | None = None  # settled → every rough shown (pages fetched)
        self.ready: float | None = None  # settled → every rough ready
        self.listed: float | None = None  # settled → the rough pages listed
        self.panel_one: float | None = None
        self.attached = False
        self.error = ""

    def run(self) -> None:
        try:
            self._run()
        except Exception as exc:  # one visit's failure is reported, not the bench's end
            self.error = f"{type(exc).__name__}: {exc}"

    def _run(self) -> None:
        person = self.person
        base = f"{person.stack.base_url}/api/storyboards/{person.storyboard}"
        person.http.get(f"{person.stack.base_url}/comics/{person.storyboard}/review/")
        time.sleep(DEBOUNCE)  # the page's debounce: Review has settled
        settled = time.monotonic()
        if self.roughs:
            asked = person.post(f"/api/storyboards/{person.storyboard}/roughs/")
            asked.raise_for_status()
        person.token = "bench"
        person.post(f"/api/storyboards/{person.storyboard}/speculate/", {"token": "bench"})
        if self.roughs:
            self._wait_for_roughs(base, settled)
        time.sleep(max(0.0, settled + self.read - time.monotonic()))
        if self.read > DEBOUNCE:  # a visit that only looks at its rough pages goes
            self._generate_and_read_on()

    def _generate_and_read_on(self) -> None:
        """Generate → panel one in hand (its image from Generate's answer when attached to
        a finished speculation, else on `panel.delivered`); then every panel, approved as
        it is shown (the whole comic's finals: what the roughs are a share of)."""
        person = self.person
        started = time.monotonic()
        answer = person.post(f"/api/storyboards/{person.storyboard}/generate/").json()
        job, self.attached = answer["job"], answer["attached"]
        first = [p for p in answer.get("delivered", []) if p["index"] == 1]
        url = first[0]["image_url"] if first else self._wait_shown(job, 1, every=0.02)
        person.http.get(f"{person.stack.base_url}{url}").raise_for_status()
        self.panel_one = time.monotonic() - started
        for index in range(1, len(PANELS) + 1):
            if index > 1:
                self._wait_shown(job, index, every=0.25)
            approved = person.post(f"/api/jobs/{job}/panels/{index}/approve/")
            approved.raise_for_status()

    def _wait_shown(self, job: int, index: int, *, every: float) -> str:
        """Waits for panel `index` of `job` to be shown; its image's URL."""
        http, base = self.person.http, self.person.stack.base_url
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            panel = http.get(f"{base}/api/jobs/{job}/").json()["panels"][index - 1]
            if panel["state"] == "failed":
                raise RuntimeError(f"job {job}: panel {index} failed: {panel['error']}")
            if panel["state"] == "delivered" and panel["image_url"]:
                return panel["image_url"]
            time.sleep(every)
        raise TimeoutError(f"job {job}: panel {index} not shown in 180 s")

    def _wait_for_roughs(self, base: str, settled: float) -> None:
        """Reads the roughs as the page's poll does, then fetches the rough pages."""
        http = self.person.http
        deadline = settled + 120
        while time.monotonic() < deadline:
            roughs = http.get(f"{base}/roughs/").json()["roughs"]
            if len(roughs) == len(PANELS) and all(r["state"] == "ready" for r in roughs):
                break
            if any(r["state"] == "failed" for r in roughs):
                raise RuntimeError(f"a rough failed: {roughs}")
            time.sleep(0.1)
        else:
            raise TimeoutError("the roughs were not all drawn in 120 s")
        self.ready = time.monotonic() - settled
        pages = http.get(f"{base}/pages/?rough=1").json()["pages"]
        self.listed = time.monotonic() - settled
        for page in pages:
            http.get(f"{self.person.stack.base_url}{page['image_url']}").raise_for_status()
        self.shown = time.monotonic() - settled


def crowd(stack: Stack, people: list, args, *, roughs: bool) -> list[Visit]:
    """`args.people` visits arriving over time, each in a thread of its own."""
    chance = random.Random(args.seed)  # the same arrivals and readings with and without
    visits, threads = [], []
    for _ in range(args.people):
        read = max(DEBOUNCE + 1, chance.lognormvariate(0, 0.6) * args.read)
        visit = Visit(Person(stack, *people.pop()), roughs=roughs, read=read)
        visits.append(visit)
        threads.append(threading.Thread(target=visit.run))
    for thread in threads:
        thread.start()
        time.sleep(chance.expovariate(1 / args.gap))
    for thread in threads:
        thread.join()
    for visit in visits:
        if visit.error:
            print(f"  a visit failed: {visit.error}", flush=True)
    return [v for v in visits if not v.error]


def warm(stack: Stack, people: list) -> None:
    """One rough and one final first, so both of the provider's fleets are warm."""
    person = Person(stack, *people.pop())
    visit = Visit(person, roughs=True, read=DEBOUNCE + 1)
    visit.run()
    if visit.error:
        raise RuntimeError(f"warming up failed: {visit.error}")


def gpu_seconds(provider: ReplicateStandIn, since: float) -> dict[str, float]:
    """The stand-in's GPU time per model for predictions made after `since`: processing,
    and each cold boot begun (booting is paid)."""
    spent: dict[str, float] = {}
    now = time.monotonic()
    with provider.lock:
        for prediction in provider.predictions.values():
            if prediction.created < since or prediction.started is None:
                continue
            ran = (prediction.completed or now) - prediction.started
            spent[prediction.model] = spent.get(prediction.model, 0.0) + ran
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description="Rough pages under a crowd.")
    parser.add_argument("--people", type=int, default=6, help="visits with roughs, and without")
    parser.add_argument("--gap", type=float, default=15.0, help="mean seconds between arrivals")
    parser.add_argument(
        "--solo", type=int, default=3, help="visits one at a time first (no one else drawing)"
    )
    parser.add_argument("--read", type=float, default=12.0, help="median seconds on Review")
    parser.add_argument("--cold-start", type=float, default=4.0)
    parser.add_argument("--rough", type=float, default=0.3, help="the draft model's seconds")
    parser.add_argument("--final", type=float, default=3.0, help="the final model's seconds")
    parser.add_argument("--seed", type=int, default=49)
    args = parser.parse_args()
    print(
        f"Replicate stand-in: cold start {args.cold_start}s, rough {args.rough}s, final "
        f"{args.final}s, GPU_POOL_SIZE 4; {args.people} people a run arriving every "
        f"{args.gap}s on average, reading a median {args.read}s; starting the stack…",
        flush=True,
    )
    with contextlib.ExitStack() as running:
        provider = running.enter_context(
            ReplicateStandIn(
                cold_boot=args.cold_start,
                render=args.final,
                capacity=4,
                idle=600,
                render_for={DRAFT: args.rough, FINAL: args.final},
                fleet_per_model=True,
            )
        )
        env = provider.environment() | {
            "REPLICATE_MODEL": FINAL,
            "REPLICATE_ROUGH_MODEL": DRAFT,
            "REPLICATE_FROM_ROUGH_MODEL": FINAL,
            "GPU_POOL_SIZE": "4",
            "RENDER_COLD_START_SECONDS": str(args.cold_start),
            "RENDER_SECONDS": str(args.final),
            "RENDER_IDLE_SECONDS": "600",
            "SPECULATION_LOOKAHEAD": "0",
            "SPECULATION_MAX_INFLIGHT": "100",
            "SPECULATION_DWELL_PRIOR_SECONDS": str(args.read),
            "ROUGHS_PER_PERSON_PER_DAY": "1000",
            "THROTTLE_SPECULATE": "1000/min",
            "DRAWING_CPU_SECONDS_PER_MINUTE": "600",
        }
        running_stack = running.enter_context(
            stack("roughs-bench", log=ROOT / "var" / "roughs-bench-stack.log", **env)
        )
        people = setup_people(running_stack, 2 * args.people + args.solo + 1, "r")
        for username, board, session_key in people:
            person = Person(running_stack, username, board, session_key)
            patched = person.http.patch(
                f"{running_stack.base_url}/api/storyboards/{board}/",
                json={"panels": PANELS},
                headers=person.csrf(),
            )
            patched.raise_for_status()
        warm(running_stack, people)
        solo = []
        for _ in range(args.solo):  # one at a time: the provider warm, nobody else's finals
            visit = Visit(Person(running_stack, *people.pop()), roughs=True, read=DEBOUNCE)
            visit.run()
            solo.append(visit)
        since = time.monotonic()
        without = crowd(running_stack, people, args, roughs=False)
        finals_only = gpu_seconds(provider, since)
        since = time.monotonic()
        with_roughs = crowd(running_stack, people, args, roughs=True)
        spent = gpu_seconds(provider, since)
        report(solo, without, with_roughs, spent, finals_only, running_stack)


def report(solo, without, with_roughs, spent, finals_only, running_stack: Stack) -> None:
    print(f"\nReview settled → every rough of a {len(PANELS)}-panel comic, one visit at a time")
    print(f"  ready:                 {spread([v.ready for v in solo if v.ready])}")
    print(f"  shown (pages fetched): {spread([v.shown for v in solo if v.shown])}")
    print(f"\nReview settled → every rough of a {len(PANELS)}-panel comic, in the crowd")
    print(f"  ready:                 {spread([v.ready for v in with_roughs if v.ready])}")
    print(f"  pages listed:          {spread([v.listed for v in with_roughs if v.listed])}")
    print(f"  shown (pages fetched): {spread([v.shown for v in with_roughs if v.shown])}")
    print("\nGenerate → panel one in hand")
    for name, visits in (("without roughs", without), ("with roughs   ", with_roughs)):
        times = [v.panel_one for v in visits if v.panel_one is not None]
        attached = sum(v.attached for v in visits)
        print(f"  {name}: {spread(times)}  ({attached} of {len(visits)} attached)")
    roughs_seconds, finals_seconds = spent.get(DRAFT, 0.0), spent.get(FINAL, 0.0)
    print("\nGPU seconds at the provider (processing), the run with roughs")
    print(
        f"  roughs {roughs_seconds:6.1f}s, finals {finals_seconds:6.1f}s: roughs are "
        f"{100 * roughs_seconds / max(finals_seconds, 1e-9):4.1f}% of the finals'"
    )
    print(f"  (the run without roughs: finals {finals_only.get(FINAL, 0.0):6.1f}s)")
    for name, visits in (("without roughs", without), ("with roughs", with_roughs)):
        boards = [v.person.storyboard for v in visits]
        drawn = running_stack.shell(
            "from mangagen.jobs.models import JobPanel;"
            "finals = JobPanel.objects.filter(rendered_at__isnull=False,"
            f" job__storyboard__in={boards});"
            "print(finals.filter(from_rough=True).count(), finals.count())"
        ).split()
        print(f"  finals drawn from a rough, {name}: {drawn[0]} of {drawn[1]}")


if __name__ == "__main__":
    main()
