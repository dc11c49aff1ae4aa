"""What every provider stand-in shares.

A real HTTP server on 127.0.0.1 (a free port) with a route table; a fleet of
workers with the life a GPU provider gives them (a cold boot before the first
job, warm for `idle` seconds after the last, `capacity` of them, jobs queued
in order while none is free, a boot that goes on when its job is cancelled);
failures to inject (`fail_next`: an HTTP status with a body and headers, for
the next requests matching a method and path); a log of every request; and
real pictures (`draw`), PNG, JPEG or WebP.

Each stand-in (replicate.py, runpod.py, comfyui.py, a1111.py) is written from
its provider's public documentation and source, and says which.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from PIL import Image, ImageDraw


def draw(prompt: str, seed: int, width: int, height: int, fmt: str = "PNG") -> bytes:
    """A real picture that depends on the prompt and the seed: bands and discs in
    greys, as a stand-in GPU would "draw" it."""
    digest = hashlib.sha256(f"{seed}:{prompt}".encode()).digest()
    image = Image.new("RGB", (width, height), (250, 250, 250))
    pen = ImageDraw.Draw(image)
    for i in range(8):
        shade = digest[i] % 200 + 30
        x, y = digest[8 + i] * width // 256, digest[16 + i] * height // 256
        radius = (digest[24 + i] % 40 + 10) * min(width, height) // 200
        pen.ellipse((x - radius, y - radius, x + radius, y + radius), fill=(shade,) * 3)
        pen.line((0, y, width, (y + shade) % height), fill=(shade // 2,) * 3, width=3)
    buffer = io.BytesIO()
    image.save(buffer, format=fmt)
    return buffer.getvalue()


def inpaint(picture: bytes, mask: Image.Image, prompt: str, seed: int, fmt: str = "PNG") -> bytes:
    """What an inpainting model gives back, as a stand-in GPU would: `draw`n anew where
    `mask` (mode "L", the model's reading of it: 255 = redraw) is white, and everywhere
    else the picture re-encoded, its colours drifted a little (as a VAE's round trip
    shifts them), so a caller that keeps the outside must composite it back."""
    with Image.open(io.BytesIO(picture)) as opened:
        base = opened.convert("RGB")
    with Image.open(io.BytesIO(draw(prompt, seed, base.width, base.height))) as drawn:
        new = drawn.convert("RGB")
    drifted = base.point(lambda v: min(255, v + 3))
    region = mask.convert("L").resize(base.size, Image.Resampling.NEAREST)
    buffer = io.BytesIO()
    Image.composite(new, drifted, region).save(buffer, format=fmt)
    return buffer.getvalue()


def multipart(request: Request) -> tuple[dict[str, str], dict[str, list[tuple[str, bytes]]]]:
    """A multipart/form-data body as a server reads it: its text fields, and its files by
    field name (each `(filename, bytes)`, in order). Raises ValueError if it is not one."""
    from email.parser import BytesParser
    from email.policy import HTTP

    kind = request.headers.get("content-type", "")
    if not kind.startswith("multipart/form-data"):
        raise ValueError("not multipart/form-data")
    head = f"Content-Type: {kind}\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + request.body)
    fields: dict[str, str] = {}
    files: dict[str, list[tuple[str, bytes]]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True) or b""
        if part.get_filename():
            files.setdefault(str(name), []).append((str(part.get_filename()), payload))
        else:
            fields[str(name)] = payload.decode()
    return fields, files


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    match: re.Match | None = None
    at: float = field(default_factory=time.monotonic)

    def json(self) -> Any:
        return json.loads(self.body or b"null")


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    raw: bytes | None = None
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    chunked: bool = False  # sent in chunks, with no Content-Length


@dataclass
class Injected:
    method: str
    path: re.Pattern
    reply: Reply
    times: int


class Worker:
    """One GPU worker of the fleet."""

    def __init__(self, index: int):
        self.index = index
        self.ready_at = 0.0  # when its current boot ends (0: never booted)
        self.last_used = 0.0
        self.job: Any = None

    def warm(self, now: float, idle: float) -> bool:
        return self.ready_at and self.ready_at <= now and now - self.last_used <= idle


class Fleet:
    """`capacity` workers; each job waits in order for a free one, which boots first
    if it is cold (idle longer than `idle`, or never used). Drives each job through
    `start(job)` (it runs from now) and `finish(job)` (it is done) from a thread of
    its own, every `tick` seconds."""

    def __init__(self, *, capacity: int, cold_boot: float, idle: float, tick: float = 0.02):
        self.capacity, self.cold_boot, self.idle, self.tick = capacity, cold_boot, idle, tick
        self.workers = [Worker(i) for i in range(capacity)]
        self.waiting: list[Any] = []
        self.lock = threading.RLock()
        self.boots = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.start_job: Callable[[Any, float], None] = lambda job, now: None
        self.finish_job: Callable[[Any, float], bool] = lambda job, now: True

    def begin(self) -> None:
        self._thread.start()

    def end(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def submit(self, job: Any) -> None:
        with self.lock:
            self.waiting.append(job)
        self.step()

    def withdraw(self, job: Any) -> str:
        """Takes a job off the fleet: "queued" (it had no worker yet), "booting" (its
        worker goes on booting, and is warm after), "running", or "" (not here)."""
        with self.lock:
            if job in self.waiting:
                self.waiting.remove(job)
                return "queued"
            for worker in self.workers:
                if worker.job is job:
                    worker.job = None
                    now = time.monotonic()
                    if worker.ready_at > now:
                        worker.last_used = worker.ready_at
                        return "booting"
                    worker.last_used = now
                    return "running"
        return ""

    def cancel(self, job: Any, *, render: float) -> float:
        """Takes a job off the fleet; returns the seconds of boot and render it spared
        (`render`: what a whole render takes)."""
        with self.lock:
            now = time.monotonic()
            worker = self.worker_of(job)
            boot_left = max(0.0, worker.ready_at - now) if worker else 0.0
            started = getattr(job, "fleet_started_at", None)
            ran = now - started if started is not None else 0.0
            if not self.withdraw(job):
                return 0.0
            return boot_left + max(0.0, render - ran)

    def cool(self) -> None:
        """Every free worker scaled to zero: the next job boots one."""
        with self.lock:
            for worker in self.workers:
                if worker.job is None:
                    worker.ready_at = worker.last_used = 0.0

    def worker_of(self, job: Any) -> Worker | None:
        with self.lock:
            return next((w for w in self.workers if w.job is job), None)

    def step(self) -> None:
        now = time.monotonic()
        with self.lock:
            for worker in self.workers:
                job = worker.job
                if job is None:
                    continue
                if not getattr(job, "fleet_started", False) and worker.ready_at <= now:
                    self._start(job, now)
                elif getattr(job, "fleet_started", False) and self.finish_job(job, now):
                    worker.job = None
                    worker.last_used = now
            while self.waiting:
                free = [w for w in self.workers if w.job is None]
                if not free:
                    break
                warm = [w for w in free if w.warm(now, self.idle)]
                booting = [w for w in free if w.ready_at > now]
                worker = (warm or sorted(booting, key=lambda w: w.ready_at) or free)[0]
                if not warm and not booting:
                    worker.ready_at = now + self.cold_boot
                    self.boots += 1
                worker.job = self.waiting.pop(0)
                job = worker.job
                job.worker = worker.index
                if worker.ready_at <= now:
                    self._start(job, now)

    def _start(self, job: Any, now: float) -> None:
        job.fleet_started, job.fleet_started_at = True, now
        self.start_job(job, now)

    def _run(self) -> None:
        while not self._stop.wait(self.tick):
            self.step()


class StandIn:
    """A provider's HTTP API on 127.0.0.1. Subclasses register routes with `route`."""

    name = "provider"

    def __init__(self) -> None:
        self.routes: list[tuple[str, re.Pattern, Callable[[Request], Reply]]] = []
        self.requests: list[Request] = []
        self.injected: list[Injected] = []
        self.lock = threading.RLock()
        self.server: ThreadingHTTPServer | None = None
        self.url = ""

    def route(self, method: str, pattern: str, handler: Callable[[Request], Reply]) -> None:
        self.routes.append((method, re.compile(pattern + r"\Z"), handler))

    def fail_next(
        self,
        status: int,
        body: Any = None,
        *,
        method: str = "",
        path: str = "",
        times: int = 1,
        headers: dict[str, str] | None = None,
    ) -> None:
        """The next `times` requests matching `method` (any if "") and the `path`
        pattern (any if "") are answered `status` with `body` instead."""
        reply = Reply(status=status, body=body, headers=headers or {})
        with self.lock:
            self.injected.append(Injected(method, re.compile(path or ".*"), reply, times))

    def seen(self, method: str, pattern: str) -> list[Request]:
        """The requests received so far with this method and a path matching `pattern`."""
        compiled = re.compile(pattern + r"\Z")
        with self.lock:
            return [r for r in self.requests if r.method == method and compiled.match(r.path)]

    def start(self) -> StandIn:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                parts = urlsplit(self.path)
                request = Request(
                    method=self.command,
                    path=parts.path,
                    query=parse_qs(parts.query),
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=self.rfile.read(length) if length else b"",
                )
                reply = standin.answer(request)
                payload = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    if reply.chunked:
                        self.send_header("Transfer-Encoding", "chunked")
                    else:
                        self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    if not reply.chunked:
                        self.wfile.write(payload)
                        return
                    for start in range(0, len(payload), 16384):
                        piece = payload[start : start + 16384]
                        self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_DELETE = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def __enter__(self) -> StandIn:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def answer(self, request: Request) -> Reply:
        with self.lock:
            self.requests.append(request)
            for injected in self.injected:
                if (not injected.method or injected.method == request.method) and (
                    injected.path.match(request.path)
                ):
                    injected.times -= 1
                    if injected.times <= 0:
                        self.injected.remove(injected)
                    return injected.reply
        refusal = self.authenticate(request)
        if refusal is not None:
            return refusal
        for method, pattern, handler in self.routes:
            if method == request.method and (match := pattern.match(request.path)):
                request.match = match
                return handler(request)
        return self.not_found(request)

    def authenticate(self, request: Request) -> Reply | None:
        """None when the request may go on; else the provider's refusal."""
        return None

    def not_found(self, request: Request) -> Reply:
        return Reply(404, {"detail": "Not Found"})


class FleetStandIn(StandIn):
    """A serverless provider's stand-in: its jobs run on a Fleet (`self.fleet`), whose
    thread runs while the server does."""

    def __init__(self, *, cold_boot: float, render: float, capacity: int, idle: float):
        super().__init__()
        self.render_seconds = render
        self.fleet = Fleet(capacity=capacity, cold_boot=cold_boot, idle=idle)
        self.fleet.start_job = self.start_job
        self.fleet.finish_job = self.finish_job

    def start(self) -> FleetStandIn:
        super().start()
        self.fleet.begin()
        return self

    def stop(self) -> None:
        self.fleet.end()
        super().stop()

    def start_job(self, job: Any, now: float) -> None:
        """A worker starts running `job` now."""

    def finish_job(self, job: Any, now: float) -> bool:
        """Whether `job` is done (its worker is then free); called every tick."""
        return True
