"""A local stand-in for Stripe's Checkout Sessions API, over real HTTP.

Written from Stripe's API reference ("Create a Checkout Session",
`POST /v1/checkout/sessions`, form-encoded with bracketed keys, Bearer secret
key; errors as `{"error": {"type", "message"}}`): it answers a created session
object (`id`, `object`, `url`, `mode`, `status`, `payment_status`,
`client_reference_id`, `metadata`, `currency`, `amount_total`, `livemode`).
The same `Idempotency-Key` gives back the same session, as Stripe does.
Point `STRIPE_API_BASE` at `url`.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl


class StripeCheckout:
    """Use as a context manager; `sessions` lists the sessions created, in order."""

    def __init__(self) -> None:
        self.sessions: list[dict] = []
        self._by_key: dict[str, dict] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> StripeCheckout:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def create(self, form: dict[str, str], key: str) -> dict:
        with self._lock:
            if key and key in self._by_key:
                return self._by_key[key]
            number = len(self.sessions) + 1
            session_id = f"cs_test_standin{number:06d}"
            session = {
                "id": session_id,
                "object": "checkout.session",
                "url": f"https://checkout.stripe.com/c/pay/{session_id}",
                "mode": form.get("mode", "payment"),
                "status": "open",
                "payment_status": "unpaid",
                "client_reference_id": form.get("client_reference_id"),
                "metadata": {
                    name[len("metadata[") : -1]: value
                    for name, value in form.items()
                    if name.startswith("metadata[")
                },
                "currency": form.get("line_items[0][price_data][currency]"),
                "amount_total": int(form.get("line_items[0][price_data][unit_amount]") or 0),
                "livemode": False,
            }
            self.sessions.append(session)
            if key:
                self._by_key[key] = session
            return session

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                form = dict(parse_qsl(self.rfile.read(length).decode(), keep_blank_values=True))
                if not self.headers.get("Authorization", "").startswith("Bearer sk_"):
                    self._answer(401, _error("invalid_request_error", "Invalid API Key."))
                elif self.path != "/v1/checkout/sessions":
                    self._answer(404, _error("invalid_request_error", "Unrecognized request URL."))
                else:
                    key = self.headers.get("Idempotency-Key", "")
                    self._answer(200, standin.create(form, key))

            def _answer(self, status: int, body: dict) -> None:
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("Request-Id", "req_standin")
                self.end_headers()
                self.wfile.write(payload)

        return Handler


def _error(kind: str, message: str) -> dict:
    return {"error": {"type": kind, "message": message}}
