"""Request bodies are refused on their size before Django keeps them (issue #45, item 5):
through the ASGI handler as daphne calls it, a body whose Content-Length passes its
route's bound is answered 413 `too_large` without a byte of it read, and one sent
without a length as soon as what arrived passes it; an upload route takes more.
tests/stack/test_hardening_stack.py sends 300 MiB to the real server."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator

from mangagen.web import body_limits
from mangagen.web.asgi_handler import OneCrossingASGIHandler

pytestmark = pytest.mark.django_db

JSON_ROUTE = "/api/storyboards/"
UPLOAD_ROUTE = "/api/storyboards/7/panels/1/touchup/"


def scope(path: str, headers: list[tuple[bytes, bytes]]) -> dict:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


def post(path: str, chunks: list[bytes], *, length: int | None, language: str = "en"):
    """The status and body of a POST of `chunks` through the handler, and how many of
    the chunks it read."""
    headers = [(b"content-type", b"application/json"), (b"accept-language", language.encode())]
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    read = []

    async def run():
        app = ApplicationCommunicator(OneCrossingASGIHandler(), scope(path, headers))
        for n, chunk in enumerate(chunks):
            more = n < len(chunks) - 1
            await app.send_input({"type": "http.request", "body": chunk, "more_body": more})
        start = await app.receive_output(timeout=10)
        body = await app.receive_output(timeout=10)
        await app.wait(timeout=10)
        # What is still queued was never read.
        read.append(len(chunks) - app.input_queue.qsize())
        return start, body

    start, body = async_to_sync(run)()
    return start["status"], json.loads(body["body"] or b"null"), read[0]


def test_a_declared_length_past_the_bound_is_refused_without_reading_the_body(settings):
    settings.REQUEST_BODY_MAX_BYTES = 1000
    status, body, read = post(JSON_ROUTE, [b"x" * 600, b"x" * 600], length=300 * 1024 * 1024)
    assert status == 413
    assert body["error"] == "too_large" and body["limit_bytes"] == 1000
    assert "1000" in body["detail"]
    assert read == 0


def test_a_body_without_a_length_is_refused_once_past_the_bound(settings):
    settings.REQUEST_BODY_MAX_BYTES = 1000
    status, body, read = post(JSON_ROUTE, [b"x" * 600] * 5, length=None)
    assert status == 413 and body["error"] == "too_large"
    assert read == 2  # the chunk that passed the bound, and nothing after it


def test_a_body_within_the_bound_reaches_the_view(settings):
    settings.REQUEST_BODY_MAX_BYTES = 1000
    status, body, _ = post(JSON_ROUTE, [b"{}"], length=2)
    assert status == 403 and body["error"] == "not_authenticated"  # the view answered


def test_an_upload_route_takes_the_larger_bound(settings):
    settings.REQUEST_BODY_MAX_BYTES = 1000
    settings.REQUEST_UPLOAD_MAX_BYTES = 5000
    assert body_limits.limit_for(UPLOAD_ROUTE) == 5000
    assert body_limits.limit_for("/api/storyboards/7/characters/Aiko/sheet/") == 5000
    assert body_limits.limit_for("/api/storyboards/7/places/Roof/picture/") == 5000
    assert body_limits.limit_for(JSON_ROUTE) == 1000
    assert body_limits.limit_for("/no/such/route/") == 1000
    status, _, _ = post(UPLOAD_ROUTE, [b"x" * 3000], length=3000)
    assert status != 413
    status, body, _ = post(UPLOAD_ROUTE, [b"x" * 3000] * 2, length=6000)
    assert status == 413 and body["limit_bytes"] == 5000


def test_the_refusal_is_in_the_language_asked_for(settings):
    settings.REQUEST_BODY_MAX_BYTES = 1000
    _, english, _ = post(JSON_ROUTE, [b""], length=5000, language="en")
    _, japanese, _ = post(JSON_ROUTE, [b""], length=5000, language="ja")
    assert english["error"] == japanese["error"] == "too_large"
    assert english["detail"] != japanese["detail"]
