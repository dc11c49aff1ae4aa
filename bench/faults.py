"""Faults under load, on the real stack: nothing lost, nobody charged twice.

Starts the whole stack (`manage.py runstack`: two daphne processes, both
Celery workers, beat) on a fresh database and a Redis of its own, with the
procedural renderer's simulated GPU. People arrive over time, signed in;
half reach Review and let it speculate first; each clicks Generate, waits
for each panel of a three-panel comic on the job's websocket (reconnecting
with `after=` when it drops, as the page does) while reading the job every
half second, approves it, and goes on to the end. Meanwhile faults are
injected on a schedule:

- `database`: every connection of the stack's database is terminated
  (`pg_terminate_backend`), as a failover does;
- `redis`: Redis drops every client (`CLIENT KILL TYPE normal`);
- `render worker`: the Celery worker with the most renders in flight (as
  their heartbeats name it) is SIGKILLed (bin/keep-running starts it again);
- `web process`: one of the two daphne processes is SIGKILLed (bin/web starts
  it again).

A probe reads `/readyz` and the job API every 0.1 s. For each fault it prints
how long the probes failed (the recovery time), every 5xx answer with when it
came relative to the fault, and the panels in flight at the fault with when
each was delivered after it. Then the reconciliation: every person finished,
each was charged exactly for the panels shown, no hold is left open, and the
ledger's reconciliation reports nothing. Targets: everyone finishes; no 5xx
more than 2 s after a fault; a render in flight at a fault delivered within
10 s of it; charges equal panels shown, no hold open. Loopback only, bounded
(about two minutes). Run it (under the lock others' stacks share) with

    flock /tmp/mangagen-e2e.lock env DATABASE_URL=postgres://postgres@127.0.0.1:5432/mangagen \\
        .venv/bin/python bench/faults.py
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import json
import os
import signal
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import redis
import requests
import websocket

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ttfp import setup_people
from tests.support.faults import (
    drop_database_connections,
    drop_redis_clients,
    kill,
    processes,
)
from tests.support.redis_server import start_redis
from tests.support.stack import ROOT, Stack, free_port, fresh_database_url

TARGET_5XX_SECONDS = 2.0
TARGET_DELIVERY_SECONDS = 10.0


@dataclass
class Clock:
    start: float = field(default_factory=time.monotonic)
    wall: float = field(default_factory=time.time)

    def now(self) -> float:
        return time.monotonic() - self.start

    def of(self, epoch: float) -> float:
        """A server timestamp (seconds since the epoch) on this clock."""
        return epoch - self.wall


@dataclass
class Answer:
    asked: float
    at: float
    what: str
    status: int  # 0: no answer (connection refused or reset)


@dataclass
class Panel:
    person: str
    index: int
    asked: float  # Generate or the approval that asked for it
    delivered: float | None = None


@dataclass
class Record:
    lock: threading.Lock = field(default_factory=threading.Lock)
    answers: list[Answer] = field(default_factory=list)
    panels: list[Panel] = field(default_factory=list)
    finished: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    probe_failures: list[float] = field(default_factory=list)

    def answer(self, asked: float, at: float, what: str, status: int) -> None:
        with self.lock:
            self.answers.append(Answer(asked, at, what, status))


class Visitor:
    """One person in a browser: HTTP with a session, the job's websocket, retries as a
    person would (a failed click is clicked again)."""

    def __init__(self, stack: Stack, clock: Clock, record: Record, username: str, session: str):
        self.stack, self.clock, self.record, self.username = stack, clock, record, username
        self.http = requests.Session()
        self.http.request = functools.partial(self.http.request, timeout=10)
        self.http.cookies.set("sessionid", session, domain="127.0.0.1", path="/")
        self.seen: set[int] = set()
        self.after = 0
        self.socket: websocket.WebSocket | None = None

    def call(self, method: str, path: str, what: str, **kwargs) -> requests.Response | None:
        """One request; its answer (or its absence) is recorded. None when no answer came."""
        headers = kwargs.pop("headers", {})
        if method != "GET":
            if "csrftoken" not in self.http.cookies:
                self.call("GET", "/", "home")
            headers["X-CSRFToken"] = self.http.cookies.get("csrftoken", "")
        asked = self.clock.now()
        try:
            response = self.http.request(
                method, f"{self.stack.base_url}{path}", headers=headers, **kwargs
            )
        except requests.RequestException:
            self.record.answer(asked, self.clock.now(), what, 0)
            return None
        self.record.answer(asked, self.clock.now(), what, response.status_code)
        return response

    def insist(self, method: str, path: str, what: str, ok=(200, 201, 202), **kwargs) -> dict:
        """Clicks again (after a moment) until the answer is one of `ok`; 60 s at most."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            response = self.call(method, path, what, **kwargs)
            if response is not None and response.status_code in ok:
                return response.json()
            time.sleep(0.5)
        raise TimeoutError(f"{what}: no good answer in 60 s")

    def visit(self, board: int, speculate: bool, dwell: float) -> None:
        if speculate:
            self.call("GET", f"/comics/{board}/review/", "review")
            time.sleep(0.3)
            token = uuid.uuid4().hex
            self.call("POST", f"/api/storyboards/{board}/speculate/", "speculate",
                      json={"token": token})  # fmt: skip
        time.sleep(dwell)
        asked = self.clock.now()
        job = self.insist("POST", f"/api/storyboards/{board}/generate/", "generate", json={})["job"]
        panels = len(self.insist("GET", f"/api/jobs/{job}/", "job read")["panels"])
        for index in range(1, panels + 1):
            panel = Panel(self.username, index, asked)
            with self.record.lock:
                self.record.panels.append(panel)
            self.wait_delivered(job, index)
            panel.delivered = self.clock.now()
            asked = self.clock.now()
            self.approve(job, index)
        self.close()
        with self.record.lock:
            self.record.finished[self.username] = self.clock.now()

    def approve(self, job: int, index: int) -> None:
        """Approves panel `index`; an approval whose answer was lost shows in the job."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            response = self.call(
                "POST", f"/api/jobs/{job}/panels/{index}/approve/", "approve", json={}
            )
            if response is not None and response.status_code == 200:
                return
            state = self.read_job(job)
            if state and any(
                p["index"] == index and p["state"] == "approved" for p in state["panels"]
            ):
                return
            time.sleep(0.5)
        raise TimeoutError(f"job {job}: panel {index} could not be approved in 60 s")

    def read_job(self, job: int) -> dict | None:
        response = self.call("GET", f"/api/jobs/{job}/", "job read")
        return response.json() if response is not None and response.status_code == 200 else None

    def wait_delivered(self, job: int, index: int, timeout: float = 120) -> None:
        """Until panel `index` is delivered: on the websocket, or seen in a job read (the
        page re-reads its job every half second while it waits)."""
        deadline = time.monotonic() + timeout
        next_read = 0.0
        while time.monotonic() < deadline:
            if time.monotonic() >= next_read:
                next_read = time.monotonic() + 0.5
                state = self.read_job(job)
                if state and any(
                    p["index"] == index and p["state"] in ("delivered", "approved")
                    for p in state["panels"]
                ):
                    return
            if self.event(job, wanted=("panel.delivered", index)):
                return
        raise TimeoutError(f"job {job}: panel {index} not delivered in {timeout:.0f} s")

    def event(self, job: int, wanted: tuple[str, int]) -> bool:
        """Reads the job's websocket for up to half a second; True on the wanted event."""
        try:
            if self.socket is None:
                self.socket = websocket.create_connection(
                    f"ws://127.0.0.1:{self.stack.port}/ws/jobs/{job}/?after={self.after}",
                    cookie="; ".join(f"{k}={v}" for k, v in self.http.cookies.items()),
                    origin=self.stack.base_url,
                    timeout=0.5,
                )
            message = json.loads(self.socket.recv())
        except websocket.WebSocketTimeoutException:
            return False
        except (OSError, websocket.WebSocketException, ValueError):
            self.close()
            time.sleep(0.2)
            return False
        self.after = max(self.after, message["seq"])
        kind, index = wanted
        return message["type"] == kind and message["data"].get("index") == index

    def close(self) -> None:
        if self.socket is not None:
            with contextlib.suppress(OSError, websocket.WebSocketException):
                self.socket.close()
        self.socket = None


def kill_busiest_worker(stack: Stack, redis_port: int) -> int:
    """SIGKILLs the worker process with the most renders beating (the `render` one if
    none beats), so that the fault loses renders."""
    client = redis.Redis(port=redis_port, decode_responses=True)
    keys = list(client.scan_iter("mangagen:gpu:alive:*"))
    pids = Counter(int(v.rsplit(":", 1)[1]) for v in client.mget(keys) if v) if keys else {}
    workers = processes(stack.process.pid, "celery", "worker")
    busiest = [pid for pid, _ in Counter(pids).most_common() if pid in workers]
    if not busiest:
        return kill(stack.process.pid, "celery", "worker", "render@")[0]
    os.kill(busiest[0], signal.SIGKILL)
    return busiest[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=24)
    parser.add_argument("--over", type=float, default=40.0, help="seconds of arrivals")
    parser.add_argument("--first-fault", type=float, default=6.0)
    parser.add_argument("--between", type=float, default=11.0, help="seconds between faults")
    args = parser.parse_args()

    redis_port = free_port()
    redis_server = start_redis(redis_port)
    database_url = fresh_database_url("faults")
    env = {
        "DATABASE_URL": database_url,
        "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "WEB_PROCESSES": "2",
        "GPU_POOL_SIZE": "6",
        "RENDER_COLD_START_SECONDS": "2",
        "RENDER_SECONDS": "1",
        "RENDER_IDLE_SECONDS": "60",
        "SPECULATION_DEBOUNCE_MS": "300",
        "SPECULATION_DWELL_PRIOR_SECONDS": "6",
        "SPECULATION_UNPROVEN_SHARE": "100",
        "SPECULATION_MAX_INFLIGHT": "200",
        "RENDER_CONCURRENCY": "16",
        "SPECULATIVE_CONCURRENCY": "16",
        "DB_POOL_MAX_SIZE": "16",
        "HOLD_SWEEP_SECONDS": "5",
        "THROTTLE_SPECULATE": "1000/min",
        "THROTTLE_GENERATE": "1000/min",
        "MEDIA_ROOT": str(ROOT / "var" / "faults-media"),
        "BEAT_SCHEDULE_FILE": str(ROOT / "var" / "faults-celerybeat-schedule"),
    }
    faults = [
        ("database", lambda stack: drop_database_connections(database_url)),
        ("redis", lambda stack: drop_redis_clients(redis_port)),
        ("render worker", lambda stack: kill_busiest_worker(stack, redis_port)),
        ("web process", lambda stack: kill(stack.process.pid, "daphne", "--fd")),
    ]
    print(
        f"{args.people} people arriving over {args.over:.0f}s, each generating a three-panel"
        f" comic; faults every {args.between:.0f}s from {args.first_fault:.0f}s:"
        f" {', '.join(name for name, _ in faults)}. Starting the stack…",
        flush=True,
    )
    record = Record()
    try:
        with Stack(env=env, log=ROOT / "var" / "faults-stack.log") as stack:
            people = setup_people(stack, args.people + 1, "faults")
            prober_name, prober_board, prober_session = people.pop()
            clock = Clock()
            stop = threading.Event()

            def probe() -> None:
                prober = Visitor(stack, clock, record, prober_name, prober_session)
                while not stop.is_set():
                    ready = prober.call("GET", "/readyz", "readyz")
                    read = prober.call("GET", f"/api/storyboards/{prober_board}/", "board read")
                    if not (ready and ready.status_code == 200 and read and read.ok):
                        with record.lock:
                            record.probe_failures.append(clock.now())
                    time.sleep(0.1)

            def visit(n: int, username: str, board: int, session: str) -> None:
                time.sleep(max(0.0, args.over * n / args.people - clock.now()))
                try:
                    Visitor(stack, clock, record, username, session).visit(
                        board, speculate=n % 2 == 0, dwell=1.0 + (n % 4)
                    )
                except Exception as exc:  # counted, never fatal to the run
                    with record.lock:
                        record.errors.append(f"{username}: {type(exc).__name__}: {exc}"[:200])

            threads = [threading.Thread(target=probe, daemon=True)]
            threads += [
                threading.Thread(target=visit, args=(n, *person), daemon=True)
                for n, person in enumerate(people)
            ]
            for thread in threads:
                thread.start()
            fired: list[tuple[str, float]] = []
            for n, (name, inject) in enumerate(faults):
                time.sleep(max(0.0, args.first_fault + n * args.between - clock.now()))
                at = clock.now()
                inject(stack)
                fired.append((name, at))
                print(f"  {at:6.1f}s  fault: {name}", flush=True)
            for thread in threads[1:]:
                thread.join(timeout=240)
            time.sleep(1)
            stop.set()
            ledger = ast.literal_eval(
                stack.shell(RECONCILE.format(prefix="faults")).strip().splitlines()[-1]
            )
    finally:
        redis_server.kill()
    report(args, record, fired, ledger, clock)


# Per person: credits captured, panels delivered; the ledger's open holds and mismatches.
RECONCILE = """
from ledger.models import Hold
from ledger.selectors import reconciliation
from mangagen.jobs.models import JobEvent, JobPanel
people = {{}}
for panel in JobPanel.objects.filter(job__owner__username__startswith="{prefix}",
                                     delivered_at__isnull=False).select_related("job__owner"):
    people.setdefault(panel.job.owner.username, [0, 0])[1] += 1
for hold in Hold.objects.filter(state="captured").select_related("account__user"):
    if hold.account.user and hold.account.user.username.startswith("{prefix}"):
        people.setdefault(hold.account.user.username, [0, 0])[0] += hold.captured_amount
events = JobEvent.objects.filter(type__in=["panel.requeued", "panel.delivered"])
lost = [(e.job_id, e.data["index"], e.at.timestamp()) for e in events if e.type == "panel.requeued"]
shown = {{(e.job_id, e.data["index"]): e.at.timestamp()
         for e in events if e.type == "panel.delivered"}}
print({{"people": people, "open": Hold.objects.filter(state="pending").count(),
       "problems": [str(m) for m in reconciliation()],
       "requeued": [(at, shown.get((job, index))) for job, index, at in lost]}})
"""


def report(
    args, record: Record, fired: list[tuple[str, float]], ledger: dict, clock: Clock
) -> None:
    print()
    finished = len(record.finished)
    print(f"finished: {finished} of {args.people} people (target: all)")
    for error in record.errors[:5]:
        print(f"    {error}")
    worst_5xx, worst_delivery = 0.0, 0.0
    for n, (name, at) in enumerate(fired):
        until = fired[n + 1][1] if n + 1 < len(fired) else float("inf")
        failing = [t for t in record.probe_failures if at <= t < until]
        recovery = (max(failing) - at + 0.1) if failing else 0.0
        errors = [a for a in record.answers if at <= a.at < until and a.status >= 500]
        lost = [a for a in record.answers if at <= a.at < until and a.status == 0]
        in_flight = [
            p for p in record.panels if p.asked <= at and (p.delivered is None or p.delivered > at)
        ]
        delays = [p.delivered - at for p in in_flight if p.delivered is not None]
        print(f"\n{name} at {at:.1f}s")
        print(f"  recovery: probes failed for {recovery:.1f}s")
        if errors:
            # A request asked before the fault may meet it; one asked after it must not.
            worst_5xx = max(worst_5xx, max(a.asked - at for a in errors))
            shown = ", ".join(
                f"{a.what} {a.status} (asked at {a.asked - at:+.1f}s, answered {a.at - at:+.1f}s)"
                for a in errors[:8]
            )
            print(f"  5xx answers: {len(errors)}: {shown}")
        else:
            print("  5xx answers: none")
        if lost:
            print(f"  requests with no answer (connection reset): {len(lost)}")
        undelivered = len(in_flight) - len(delays)
        print(
            f"  panels in flight: {len(in_flight)}; delivered within "
            + (f"{max(delays):.1f}s" if delays else "—")
            + (f"; never: {undelivered}" if undelivered else "")
        )
        worst_delivery = max([worst_delivery, *delays])
        # Renders the server found lost (their worker stopped beating) and sent again.
        requeued = [
            (clock.of(lost), clock.of(shown) if shown else None)
            for lost, shown in ledger["requeued"]
            if at <= clock.of(lost) < until
        ]
        if requeued:
            print(
                f"  renders found lost and sent again: {len(requeued)}; delivered "
                + ", ".join(f"+{shown - at:.1f}s" if shown else "never" for _, shown in requeued)
                + " after the fault"
            )
            worst_delivery = max([worst_delivery, *(s - at for _, s in requeued if s)])
    people = ledger["people"]
    wrong = {who: (paid, shown) for who, (paid, shown) in people.items() if paid != shown}
    shown_total = sum(shown for _, shown in people.values())
    print("\nreconciliation")
    print(
        f"  charged for what was shown: {'yes' if not wrong else 'NO'}"
        f" ({shown_total} panels shown, {sum(p for p, _ in people.values())} credits captured)"
        + (f"; mismatches: {wrong}" if wrong else "")
    )
    print(f"  holds left open: {ledger['open']}")
    print(f"  ledger reconciliation: {ledger['problems'] or 'all reconciled'}")
    print("\ntargets")
    print(f"  everyone finished: {'met' if finished == args.people else 'MISSED'}")
    print(
        f"  no 5xx for a request asked more than {TARGET_5XX_SECONDS:.0f}s after a fault: "
        + ("met" if worst_5xx <= TARGET_5XX_SECONDS else f"MISSED ({worst_5xx:.1f}s)")
    )
    print(
        f"  panels in flight delivered within {TARGET_DELIVERY_SECONDS:.0f}s of a fault: "
        + (
            "met"
            if worst_delivery <= TARGET_DELIVERY_SECONDS
            and all(p.delivered is not None for p in record.panels)
            else f"MISSED ({worst_delivery:.1f}s)"
        )
    )
    balanced = not wrong and ledger["open"] == 0 and not ledger["problems"]
    print(f"  charged exactly, no hold open, reconciled: {'met' if balanced else 'MISSED'}")


if __name__ == "__main__":
    main()
