"""A local stand-in for an HTTP API (OpenAI-compatible endpoints in tests).

Answers each request with the next canned response and records what it got.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Canned:
    status: int = 200
    body: object = None
    raw: bytes | None = None
    delay: float = 0.0
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)  # more headers (a Location)
    send_length: bool = True  # False: no Content-Length, the body ends with the connection


@dataclass
class StandIn:
    responses: list[Canned] = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)
    url: str = ""

    def reply(self, *responses: Canned) -> None:
        self.responses.extend(responses)


def serve() -> tuple[StandIn, ThreadingHTTPServer]:
    standin = StandIn()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw
            standin.requests.append(
                {
                    "method": self.command,
                    "path": self.path,
                    "headers": dict(self.headers),
                    "json": body,
                }
            )
            canned = (
                standin.responses.pop(0) if standin.responses else Canned(404, {"error": "none"})
            )
            if canned.delay:
                time.sleep(canned.delay)
            payload = canned.raw if canned.raw is not None else json.dumps(canned.body).encode()
            try:
                self.send_response(canned.status)
                self.send_header("Content-Type", canned.content_type)
                for name, value in canned.headers.items():
                    self.send_header(name, value)
                if canned.send_length:
                    self.send_header("Content-Length", str(len(payload)))
                else:
                    self.close_connection = True
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass

        do_GET = do_POST = _answer

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    standin.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return standin, server
