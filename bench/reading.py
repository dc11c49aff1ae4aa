"""Many people reading one published comic at once: its page, the page's 304 and its reader
page, against a static file of the same size; and, on S3, where the page's bytes come from.

Starts the web process (`bin/web`: daphne, as the Procfile runs it) on a fresh,
migrated database; publishes a comic of one drawn page through the service
(mangagen/publishing), and copies that page's bytes into the static folder, so
the same process serves the same bytes two ways: the reading link's page, at the
address its reader page gives (`/read/<token>/pages/1/?lang=…&v=…`: the lean
path ahead of Django, publishing/serving.py), and `/static/…` (WhiteNoise,
inside Django). Then, for each `--readers` count, that many concurrent readers,
each on its own keep-alive HTTP/1.1 connection over the loopback, ask back to
back for `--seconds` for each target in turn, and again in the reverse order
(neither gets the warmer machine): the page, the page with its ETag in
If-None-Match (a 304, what a returning reader's browser asks), the reader page
(`/read/<token>/`, through Django), the static file. Prints requests per second,
p50/p95 latency and the rate against the static file's.

Then, unless `--no-s3`, the same comic on S3 (moto's server, as the test suite
runs it: tests/support/s3.py) with READ_FROM_STORAGE on: `--s3-readers` readers
ask for the page and follow its redirect to the bucket, and the bench counts
the page bytes each side sent: the share no application process served.

The load generator runs in this process on the same machine: the figures compare
the targets, they are no capacity figure for a server of its own. Not a test;
run it with

    .venv/bin/python bin/with-redis .venv/bin/python bench/reading.py
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
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.s3 import S3Server
from tests.support.stack import ROOT, WebServer, migrated_database_url, redis_url

PUBLISH = """
import json
from django.contrib.auth import get_user_model
from mangagen.publishing import selectors, services
from tests.support import factories
owner = get_user_model().objects.create_user("bench-reader-{suffix}", password="x-bench-pass-1")
board = factories.storyboard(owner, panels=[
    {{"description": "Aiko waits on the roof.", "shot": "wide",
      "dialogue": [{{"speaker": "Aiko", "text": "He is late."}}]}},
    {{"description": "Kenji runs up the stairs.", "shot": "medium"}},
])
factories.keep(board)
link, _ = services.publish_comic(storyboard=board)
print(json.dumps({{"url": selectors.read_url(link),
                   "page": selectors.reader(link, language=None)["first_page"],
                   "file": link.manifest["pages"][0]["files"][board.language]}}))
"""


class Connection:
    """One keep-alive HTTP/1.1 connection: asks and reads whole answers."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def ask(self, target: str, headers: str = "") -> tuple[int, dict[str, str], bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        request = f"GET {target} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{headers}\r\n"
        self.writer.write(request.encode("latin-1"))
        await self.writer.drain()
        status_line = await self.reader.readline()
        found: dict[str, str] = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            found[name.strip().lower()] = value.strip()
        if "content-length" in found:
            body = await self.reader.readexactly(int(found["content-length"]))
        elif found.get("transfer-encoding") == "chunked":
            body = await self._chunks()
        else:
            body = await self.reader.read()  # to the end of the connection
        if found.get("connection", "").lower() == "close" or b"HTTP/1.0" in status_line:
            self.close()
        return int(status_line.split()[1]), found, body

    async def _chunks(self) -> bytes:
        assert self.reader is not None
        body = b""
        while size := int((await self.reader.readline()).split(b";")[0], 16):
            body += await self.reader.readexactly(size)
            await self.reader.readline()
        await self.reader.readline()
        return body

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def reader(port: int, path: str, headers: str, until: float, out: list[float]) -> None:
    """One reader on one keep-alive connection: asks for `path` until `until`."""
    connection = Connection("127.0.0.1", port)
    try:
        while time.perf_counter() < until:
            start = time.perf_counter()
            status, _, _ = await connection.ask(path, headers)
            if status not in (200, 304):
                raise RuntimeError(f"{path}: {status}")
            out.append(time.perf_counter() - start)
    finally:
        connection.close()


async def run(port: int, path: str, headers: str, readers: int, seconds: float):
    latencies: list[float] = []
    started = time.perf_counter()
    until = started + seconds
    await asyncio.gather(*(reader(port, path, headers, until, latencies) for _ in range(readers)))
    return latencies, time.perf_counter() - started


def measure(port: int, path: str, headers: str, readers: int, seconds: float):
    latencies, elapsed = asyncio.run(run(port, path, headers, readers, seconds))
    cuts = statistics.quantiles(latencies, n=100)
    return len(latencies) / elapsed, cuts[49] * 1000, cuts[94] * 1000


def side_by_side(web: WebServer, made: dict, static_name: str, args) -> dict:
    """Each target at each readers count, two rounds in opposite orders."""
    targets = {
        "reading link page": (made["page"], ""),
        "reading link 304": (made["page"], f"If-None-Match: {made['file']['etag']}\r\n"),
        "reader page (HTML)": (made["url"], ""),
        "static file": (f"/static/{static_name}", ""),
    }
    for path, headers in targets.values():  # warm up: each path answered a few times
        asyncio.run(run(web.port, path, headers, 4, 0.3))
    results: dict = {}
    for readers in args.readers:
        rounds: dict[str, list] = {name: [] for name in targets}
        for order in (list(targets), list(reversed(targets))):
            for name in order:
                path, headers = targets[name]
                rounds[name].append(measure(web.port, path, headers, readers, args.seconds))
        results[readers] = rounds
    return results


def print_side_by_side(results: dict, size: int, args) -> None:
    print(
        f"{size} bytes a page; keep-alive HTTP/1.1 over the loopback, "
        f"{args.seconds:g} s per target and round, two rounds (each figure their mean)"
    )
    for readers, rounds in results.items():
        print(f"\n{readers} concurrent readers")
        print(f"{'target':<20} {'req/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'req/s vs static':>16}")
        static_rate = statistics.mean(r for r, _, _ in rounds["static file"])
        for name, each in rounds.items():
            rate = statistics.mean(r for r, _, _ in each)
            p50 = statistics.mean(p for _, p, _ in each)
            p95 = statistics.mean(p for _, _, p in each)
            print(f"{name:<20} {rate:>9.0f} {p50:>8.1f} {p95:>8.1f} {rate / static_rate:>15.2f}x")


async def s3_reader(web_port: int, path: str, until: float, counts: dict, out: list[float]):
    """Asks the web process for the page and follows its redirect to the bucket."""
    app = Connection("127.0.0.1", web_port)
    buckets: dict[tuple[str, int], Connection] = {}
    try:
        while time.perf_counter() < until:
            start = time.perf_counter()
            status, headers, body = await app.ask(path)
            counts["application"] += len(body) if status == 200 else 0
            if status in (301, 302, 303, 307, 308):
                where = urlsplit(headers["location"])
                key = (where.hostname or "", where.port or 80)
                bucket = buckets.setdefault(key, Connection(*key))
                status, _, body = await bucket.ask(f"{where.path}?{where.query}")
                if status != 200:
                    raise RuntimeError(f"{headers['location']}: {status}")
                counts["bucket"] += len(body)
            elif status != 200:
                raise RuntimeError(f"{path}: {status}")
            out.append(time.perf_counter() - start)
    finally:
        app.close()
        for each in buckets.values():
            each.close()


def on_s3(args) -> None:
    """The comic on S3 with READ_FROM_STORAGE: who sent the page's bytes."""
    with S3Server(log=ROOT / "artifacts" / "bench-reading-s3.log") as s3:
        env = {
            **s3.env(s3.new_bucket()),
            "READ_FROM_STORAGE": "on",
            "DATABASE_URL": migrated_database_url("bench_reading_s3"),
            "REDIS_URL": redis_url(9),
            "THROTTLE_READ": "100000000/min",
            "LOG_LEVEL": "WARNING",
        }
        with WebServer(env=env, log=ROOT / "artifacts" / "bench-reading-s3-web.log") as web:
            made = json.loads(
                web.shell(PUBLISH.format(suffix=uuid.uuid4().hex[:8])).splitlines()[-1]
            )

            async def readers(seconds: float):
                counts = {"application": 0, "bucket": 0}
                latencies: list[float] = []
                started = time.perf_counter()
                until = started + seconds
                await asyncio.gather(
                    *(
                        s3_reader(web.port, made["page"], until, counts, latencies)
                        for _ in range(args.s3_readers)
                    )
                )
                return counts, latencies, time.perf_counter() - started

            asyncio.run(readers(1.0))  # warm up: the link read, the URL signed, boto3 loaded
            counts, latencies, elapsed = asyncio.run(readers(args.seconds))
    total = counts["application"] + counts["bucket"]
    cuts = statistics.quantiles(latencies, n=100)
    print(
        f"\nOn S3 (moto's server), READ_FROM_STORAGE on: {args.s3_readers} readers, "
        f"{args.seconds:g} s, each read = the page's address, then its redirect to the bucket"
    )
    print(
        f"{len(latencies) / elapsed:.0f} reads/s, p50 {cuts[49] * 1000:.1f} ms, "
        f"p95 {cuts[94] * 1000:.1f} ms; page bytes: {counts['bucket']} from the bucket, "
        f"{counts['application']} from the web process: "
        f"{100 * counts['bucket'] / total:.1f}% served by no application process"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--readers", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--seconds", type=float, default=8.0, help="per target and round")
    parser.add_argument("--s3-readers", type=int, default=16, help="readers of the S3 run")
    parser.add_argument("--no-s3", action="store_true", help="skip the run on S3")
    args = parser.parse_args()

    media = ROOT / "var" / "bench-reading-media"
    env = {
        "DATABASE_URL": migrated_database_url("bench_reading"),
        "REDIS_URL": redis_url(8),
        "MEDIA_ROOT": str(media),
        # Every reader comes from 127.0.0.1: the throttles count but never refuse.
        "THROTTLE_READ": "100000000/min",
        "LOG_LEVEL": "WARNING",
    }
    static = ROOT / "static" / f"bench-reading-{uuid.uuid4().hex[:8]}.png"
    with WebServer(env=env, log=ROOT / "artifacts" / "bench-reading.log") as web:
        made = json.loads(web.shell(PUBLISH.format(suffix=uuid.uuid4().hex[:8])).splitlines()[-1])
        page = (media / made["file"]["name"]).read_bytes()
        static.write_bytes(page)
        try:
            results = side_by_side(web, made, static.name, args)
        finally:
            static.unlink(missing_ok=True)
    print_side_by_side(results, len(page), args)
    if not args.no_s3:
        on_s3(args)


if __name__ == "__main__":
    main()
