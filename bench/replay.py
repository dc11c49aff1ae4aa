"""A late attach on the real server: replaying 1, 100 and 1,000 missed events.

Starts the web process (`bin/web`, daphne) on a fresh database and a Redis
database of its own, signs one person up and gives them three jobs whose logs
hold 1, 100 and 1,000 events. Then, round after round, opens
`/ws/jobs/<id>/?after=0` and times it from the connection's start to the last
event received, the stream's handshake, sign-in check and slot included (the
client skips websocket-client's pure-Python UTF-8 check, as a browser's is
native): one
frame per event (what a client that does not ask gets), and with `batch=1`
(`{"type": "events", "events": [...]}` messages). Both ways are measured back
to back in each round, the order flipped each round; the medians are printed
side by side, each beside the 1-event replay of its own way. Each replay is
checked: seq 1..N, no gap, nothing twice. Not a test; run it with

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/mangagen REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/replay.py
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import websocket

from tests.support.people import Visitor
from tests.support.stack import ROOT, WebServer, migrated_database_url, redis_url

SIZES = (1, 100, 1000)

MAKE_JOBS = """
from django.contrib.auth import get_user_model
from django.utils import timezone
from mangagen.jobs.models import Job, JobEvent
from mangagen.storyboards import services as storyboards
owner = get_user_model().objects.get(username={username!r})
for size in {sizes!r}:
    board = storyboards.create_storyboard(owner=owner, title=f"Replay {{size}}")
    job = Job.objects.create(
        owner=owner, storyboard=board, version="v", style="manga", last_seq=size
    )
    JobEvent.objects.bulk_create(
        JobEvent(job=job, seq=n, type="panel.rendering",
                 data={{"index": 1 + n % 24, "attempt": 1, "warming": False, "warm_in": None}})
        for n in range(1, size + 1)
    )
    print(size, job.pk)
"""


def replay(person: Visitor, job: int, size: int, *, batched: bool) -> float:
    """Seconds from opening the stream to holding event `size`; checks seq 1..size."""
    path = f"/ws/jobs/{job}/?after=0" + ("&batch=1" if batched else "")
    started = time.perf_counter()
    socket = websocket.create_connection(
        person.base_url.replace("http", "ws", 1) + path,
        cookie="; ".join(f"{k}={v}" for k, v in person.http.cookies.items()),
        origin=person.base_url,
        timeout=30,
        # websocket-client checks a text frame's UTF-8 in pure Python (about 0.1 ms per
        # kB here): the client's cost, not the server's; a browser's check is native.
        skip_utf8_validation=True,
    )
    seqs: list[int] = []
    while not seqs or seqs[-1] < size:
        message = json.loads(socket.recv())
        events = message["events"] if message.get("type") == "events" else [message]
        seqs.extend(event["seq"] for event in events)
    took = time.perf_counter() - started
    socket.close()
    assert seqs == list(range(1, size + 1)), f"replay of {size}: {seqs[:5]}…"
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    database = migrated_database_url("replay")
    env = {"DATABASE_URL": database, "REDIS_URL": redis_url(14), "WEB_PROCESSES": "1"}
    with WebServer(env=env, log=ROOT / "var" / "replay-web.log") as web:
        person = Visitor(web.base_url)
        made = web.shell(MAKE_JOBS.format(username=person.username, sizes=SIZES))
        jobs = {
            int(size): int(job) for size, job in (line.split() for line in made.split("\n") if line)
        }
        for size, job in jobs.items():  # warm: connections, prepared code paths
            replay(person, job, size, batched=False)
            replay(person, job, size, batched=True)
        took: dict[tuple[int, bool], list[float]] = {
            (s, b): [] for s in SIZES for b in (False, True)
        }
        for round_number in range(args.rounds):
            for size in SIZES:
                ways = (False, True) if round_number % 2 == 0 else (True, False)
                for batched in ways:
                    took[size, batched].append(replay(person, jobs[size], size, batched=batched))
    print(
        f"replaying a job's log on a late attach, daphne, medians of {args.rounds} rounds"
        " (connection included; seq 1..N checked)"
    )
    print(f"{'events':>7} {'a frame each':>13} {'vs 1':>6} {'batch=1':>9} {'vs 1':>6}")
    one = {batched: median(took[1, batched]) for batched in (False, True)}
    for size in SIZES:
        frames, batched = median(took[size, False]), median(took[size, True])
        print(
            f"{size:>7} {frames * 1000:>10.1f} ms {frames / one[False]:>5.1f}x"
            f" {batched * 1000:>6.1f} ms {batched / one[True]:>5.1f}x"
        )


if __name__ == "__main__":
    main()
