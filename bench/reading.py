"""One published page read by many people at once, against a static file of the same size.

Starts the web process (`bin/web`: daphne, as the Procfile runs it) on a fresh,
migrated database; publishes a comic of one drawn page through the service
(mangagen/publishing), and copies that page's bytes into the static folder, so
the same process serves the same bytes two ways: `/read/<token>/pages/1/` (the
reading link: the token's row, the per-address throttle in Redis, the file read
from the media storage) and `/static/…` (WhiteNoise). Then `--readers`
concurrent readers, each on its own keep-alive HTTP/1.1 connection over the
loopback, ask for the page back to back for `--seconds`, one target after the
other and then both again (the order swapped, so neither gets the warmer
machine); and the same for the page with its ETag in If-None-Match (a 304,
what a returning reader's browser asks). Prints requests per second and the
p50/p95 latency of each, side by side. The load generator runs in this process
on the same machine: the figures compare the two targets, they are no
capacity figure for a server of its own. Not a test; run it with

    .venv/bin/python bin/with-redis .venv/bin/python bench/reading.py [--readers 64] [--seconds 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.stack import ROOT, WebServer, migrated_database_url, redis_url

PUBLISH = """
import json
from django.contrib.auth import get_user_model
from mangagen.publishing import services
from tests.support import factories
owner = get_user_model().objects.create_user("bench-reader-{suffix}", password="x-bench-pass-1")
board = factories.storyboard(owner, panels=[
    {{"description": "Aiko waits on the roof.", "shot": "wide",
      "dialogue": [{{"speaker": "Aiko", "text": "He is late."}}]}},
    {{"description": "Kenji runs up the stairs.", "shot": "medium"}},
])
factories.keep(board)
link, _ = services.publish_comic(storyboard=board)
print(json.dumps({{"url": f"/read/{{link.token}}/",
                   "file": link.manifest["pages"][0]["files"][board.language]}}))
"""


async def reader(host: str, port: int, path: str, headers: str, until: float, out: list[float]):
    """One reader on one keep-alive connection: asks for `path` until `until`."""
    stream_in, stream_out = await asyncio.open_connection(host, port)
    request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n{headers}\r\n".encode()
    try:
        while time.perf_counter() < until:
            start = time.perf_counter()
            stream_out.write(request)
            await stream_out.drain()
            status = await stream_in.readline()
            length = 0
            while (line := await stream_in.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if length:
                await stream_in.readexactly(length)
            if status.split()[1] not in (b"200", b"304"):
                raise RuntimeError(f"{path}: {status!r}")
            out.append(time.perf_counter() - start)
    finally:
        stream_out.close()


async def run(host: str, port: int, path: str, headers: str, readers: int, seconds: float):
    latencies: list[float] = []
    started = time.perf_counter()
    until = started + seconds
    await asyncio.gather(
        *(reader(host, port, path, headers, until, latencies) for _ in range(readers))
    )
    elapsed = time.perf_counter() - started
    return latencies, elapsed


def measure(web: WebServer, path: str, headers: str, args) -> tuple[float, float, float]:
    runs = [asyncio.run(run("127.0.0.1", web.port, path, headers, args.readers, args.seconds))]
    latencies = [x for each, _ in runs for x in each]
    elapsed = sum(e for _, e in runs)
    cuts = statistics.quantiles(latencies, n=100)
    return len(latencies) / elapsed, cuts[49] * 1000, cuts[94] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--readers", type=int, default=64, help="concurrent readers")
    parser.add_argument("--seconds", type=float, default=8.0, help="per target and round")
    args = parser.parse_args()

    media = ROOT / "var" / "bench-reading-media"
    env = {
        "DATABASE_URL": migrated_database_url("bench_reading"),
        "REDIS_URL": redis_url(8),
        "MEDIA_ROOT": str(media),
        # Every reader comes from 127.0.0.1: the throttle is counted (its Redis round trip
        # is part of each request) but never refuses.
        "THROTTLE_READ": "100000000/min",
        "LOG_LEVEL": "WARNING",
    }
    static = ROOT / "static" / f"bench-reading-{uuid.uuid4().hex[:8]}.png"
    with WebServer(env=env, log=ROOT / "artifacts" / "bench-reading.log") as web:
        made = json.loads(web.shell(PUBLISH.format(suffix=uuid.uuid4().hex[:8])).splitlines()[-1])
        page = (media / made["file"]["name"]).read_bytes()
        static.write_bytes(page)
        try:
            targets = {
                "reading link page": (f"{made['url']}pages/1/", ""),
                "static file": (f"/static/{static.name}", ""),
                "reading link 304": (
                    f"{made['url']}pages/1/",
                    f"If-None-Match: {made['file']['etag']}\r\n",
                ),
            }
            for path, headers in targets.values():  # warm up: each path answered once
                asyncio.run(run("127.0.0.1", web.port, path, headers, 1, 0.2))
            results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in targets}
            for order in (list(targets), list(reversed(targets))):
                for name in order:
                    path, headers = targets[name]
                    results[name].append(measure(web, path, headers, args))
        finally:
            static.unlink(missing_ok=True)
    print(
        f"{len(page)} bytes, {args.readers} concurrent readers over keep-alive HTTP/1.1, "
        f"{args.seconds:g} s per target and round, two rounds"
    )
    print(f"{'target':<20} {'req/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'req/s vs static':>16}")
    static_rate = statistics.mean(r for r, _, _ in results["static file"])
    for name, rounds in results.items():
        rate = statistics.mean(r for r, _, _ in rounds)
        p50 = statistics.mean(p for _, p, _ in rounds)
        p95 = statistics.mean(p for _, _, p in rounds)
        ratio = rate / static_rate
        print(f"{name:<20} {rate:>9.0f} {p50:>8.1f} {p95:>8.1f} {ratio:>15.2f}x")
    print("each figure: the mean of the two rounds")


if __name__ == "__main__":
    main()
