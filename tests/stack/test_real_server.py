"""What only the real server shows: daphne's websocket close frames, and request
bodies as daphne hands them over. Consumer tests go through Channels'
WebsocketCommunicator, which never meets autobahn (where an IntEnum close code
once ended every refused stream with 1011, internal error).

One database, migrated once; two web processes on it: one with the usual idle
limit, and one that closes a quiet stream after a second.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import websocket

from mangagen.web.consumers import CloseCode
from tests.support.people import Visitor, close_code
from tests.support.stack import ROOT, WebServer, migrated_database_url, own_redis_url
from tests.support.waiting import wait_for

ARTIFACTS = ROOT / "artifacts"
PANELS = [
    {"description": "Aiko runs.", "shot": "wide", "characters": ["Aiko"]},
    {"description": "Aiko waits.", "shot": "medium", "characters": ["Aiko"]},
]


@pytest.fixture(scope="module")
def database_url():
    return migrated_database_url("real_server")


def server(database_url: str, name: str, **env: str):
    return WebServer(
        env={"DATABASE_URL": database_url, "REDIS_URL": own_redis_url(), **env},
        log=ARTIFACTS / f"real-server-{name}.log",
    )


@pytest.fixture(scope="module")
def web(database_url):
    with server(database_url, "web", WS_MAX_CONNECTIONS_PER_PERSON="2") as running:
        yield running


@pytest.fixture(scope="module")
def quick_to_idle(database_url):
    with server(database_url, "idle", WS_IDLE_SECONDS="1") as running:
        yield running


def person_with_a_job(base_url: str) -> tuple[Visitor, int, int]:
    """A person with demo credits, a comic of two panels and a confirmed job of it."""
    person = Visitor(base_url)
    assert person.post("/credits/demo/", allow_redirects=False).status_code == 302
    board = person.post("/api/storyboards/", {"title": "Real server", "story": "Aiko runs."})
    assert board.status_code == 201, board.text
    board_id = board.json()["id"]
    patched = person.request(
        "PATCH",
        f"/api/storyboards/{board_id}/",
        json={"characters": [{"name": "Aiko", "description": "red scarf"}], "panels": PANELS},
    )
    assert patched.status_code == 200, patched.text
    generated = person.post(f"/api/storyboards/{board_id}/generate/")
    assert generated.status_code == 201, generated.text
    return person, board_id, generated.json()["job"]


def assert_open(socket: websocket.WebSocket) -> None:
    """The stream answers a ping: it is open (the proof is the answer, not silence)."""
    socket.send(json.dumps({"type": "ping"}))
    while True:
        message = json.loads(socket.recv())
        if message.get("type") == "pong":
            return


# --- websocket close codes ------------------------------------------------------------------


def test_a_stranger_and_an_anonymous_visitor_are_closed_with_4403(web):
    _, _, job = person_with_a_job(web.base_url)
    stranger = Visitor(web.base_url)
    anonymous = Visitor(web.base_url, sign_up=False)
    for visitor in (stranger, anonymous):
        socket = visitor.websocket(f"/ws/jobs/{job}/")
        assert close_code(socket) == CloseCode.FORBIDDEN == 4403


def test_a_stream_past_the_persons_limit_is_closed_with_4429_and_takes_no_slot(web):
    person, _, job = person_with_a_job(web.base_url)
    first, second = (person.websocket(f"/ws/jobs/{job}/") for _ in range(2))
    for socket in (first, second):
        assert_open(socket)
    third = person.websocket(f"/ws/jobs/{job}/")
    assert close_code(third) == CloseCode.TOO_MANY == 4429
    first.close()  # gives its slot back, once the server has seen the close

    def a_stream_opens():
        candidate = person.websocket(f"/ws/jobs/{job}/")
        candidate.send(json.dumps({"type": "ping"}))
        opcode, _ = candidate.recv_data(control_frame=True)
        return None if opcode == websocket.ABNF.OPCODE_CLOSE else candidate

    again = wait_for(a_stream_opens, timeout=30, every=0.1, what="the closed stream's slot")
    again.close()
    second.close()


def test_an_idle_stream_is_closed_with_4408(quick_to_idle):
    person, _, job = person_with_a_job(quick_to_idle.base_url)
    socket = person.websocket(f"/ws/jobs/{job}/?after=1000")
    assert close_code(socket) == CloseCode.IDLE == 4408


# --- the replay in batches ---------------------------------------------------------------------


def read_until_pong(socket: websocket.WebSocket) -> list[dict]:
    socket.send(json.dumps({"type": "ping"}))
    got = []
    while (message := json.loads(socket.recv())).get("type") != "pong":
        got.append(message)
    return got


def test_a_replay_asked_for_in_batches_is_one_message_on_daphne(web):
    person, _, job = person_with_a_job(web.base_url)
    single = person.websocket(f"/ws/jobs/{job}/?after=0")
    frames = read_until_pong(single)
    single.close()
    batched = person.websocket(f"/ws/jobs/{job}/?after=0&batch=1")
    messages = read_until_pong(batched)
    batched.close()
    assert len(frames) >= 2 and all("seq" in frame for frame in frames)
    (message,) = messages
    assert message["type"] == "events"
    assert [e["seq"] for e in message["events"]] == list(range(1, len(frames) + 1))
    assert message["events"] == frames


def test_the_server_logged_no_crash(web, quick_to_idle):
    for running in (web, quick_to_idle):
        log = Path(running.log).read_text()
        assert "Traceback" not in log, log[-3000:]


# --- POSTs that need no body ------------------------------------------------------------------

# Routes whose request body means something; every other POST or DELETE of
# docs/api.md takes none, and must take a client's empty JSON object or a form too.
TAKES_A_BODY = {
    "POST /accounts/login/",
    "POST /accounts/signup/",
    "POST /api/storyboards/",
    "POST /api/storyboards/<id>/panels/<index>/touchup/",
    "POST /api/storyboards/<id>/panels/<n>/reshape/",
    "POST /api/credits/checkout/",
    "POST /stripe/webhook/",
    "POST /api/storyboards/<id>/speculate/leave/",
    "POST /api/series/",
    "POST /api/cast/",
    "POST /api/places/",
    "POST /api/storyboards/<id>/characters/",
    "POST /api/storyboards/<id>/places/",
}
LAST = ("DELETE /api/storyboards/<id>/", "POST /accounts/logout/")


def bodiless_routes() -> list[str]:
    api = (ROOT / "docs" / "api.md").read_text()
    found = re.findall(r"^\| `((?:POST|DELETE) /[^`? ]+)", api, flags=re.MULTILINE)
    routes = sorted(
        set(found) - TAKES_A_BODY, key=lambda r: (r in LAST, LAST.index(r) if r in LAST else 0, r)
    )
    return routes


def test_every_route_that_needs_no_body_takes_none_an_empty_json_object_or_a_form(web):
    person, board, job = person_with_a_job(web.base_url)
    values = {
        "<id>": str(board),
        "<name>": "Aiko",
        "<index>": "1",
        "<n>": "1",
        "<take>": "1",
        "<lang>": "fr",
    }
    job_routes = {"/api/jobs/<id>/"}
    routes = bodiless_routes()
    assert "POST /api/storyboards/<id>/characters/<name>/sheet/" in routes  # once a 415
    refused = []
    for route in routes:
        method, path = route.split(" ", 1)
        if any(path.startswith(prefix) for prefix in job_routes):
            path = path.replace("<id>", str(job), 1)
        for placeholder, value in values.items():
            path = path.replace(placeholder, value)
        assert "<" not in path, f"{route}: give the test a value for its placeholder"
        bodies = {
            "no body": {},
            "an empty JSON object": {"json": {}},
            "a form": {"data": {"csrfmiddlewaretoken": person.csrf}},
        }
        for what, body in bodies.items():
            answer = person.request(method, path, allow_redirects=False, **body)
            if answer.status_code in (400, 415) or answer.status_code >= 500:
                refused.append(f"{route} with {what}: {answer.status_code} {answer.text[:200]}")
    assert refused == []


# --- what an error gives away -----------------------------------------------------------------

# A chat model at an address nothing listens on, behind an internal path, with a key.
UNREACHABLE_CHAT = "http://127.0.0.1:9/internal-chat-gateway"
GIVEAWAYS = ("127.0.0.1", "port", ":9", "internal-chat-gateway", "/v1/", "sk-internal", "HTTP")


@pytest.fixture(scope="module")
def unreachable_chat(database_url):
    env = {
        "TRANSLATOR": "openai",
        "DRAFTER": "openai",
        "CHAT_BASE_URL": UNREACHABLE_CHAT,
        "CHAT_API_KEY": "sk-internal-key",
        "CHAT_TIMEOUT_SECONDS": "5",
    }
    with server(database_url, "chat", **env) as running:
        yield running


def test_an_unreachable_chat_model_is_named_by_no_address_only_in_the_log(unreachable_chat):
    """The translation draft's 502 and the drafter's notice say what happened in fixed
    words; the address, the path and the library's words are in the log line that
    carries the request's id."""
    person = Visitor(unreachable_chat.base_url)
    board = person.post("/api/storyboards/", {"title": "Roof", "story": 'Aiko ran. "Go!"'})
    assert board.status_code == 201, board.text
    board_id = board.json()["id"]

    translated = person.post(f"/api/storyboards/{board_id}/translations/ja/draft/")
    assert translated.status_code == 502, translated.text
    assert translated.headers["Content-Type"] == "application/json"
    assert translated.json() == {
        "error": "translator_failed",
        "detail": "The translation model could not be used (the model could not be reached); "
        "nothing was changed.",
    }
    drafted = person.post(f"/api/storyboards/{board_id}/draft/")
    assert drafted.status_code == 200, drafted.text
    assert "(the model could not be reached)" in drafted.json()["notice"]
    for answer in (translated, drafted):
        leaked = [word for word in GIVEAWAYS if word in answer.text]
        assert leaked == [], answer.text

    for answer in (translated, drafted):
        line = logged_line(Path(unreachable_chat.log), answer.headers["X-Request-ID"])
        assert "internal-chat-gateway" in line and "port=9" in line and "unreachable" in line


def logged_line(log: Path, request_id: str) -> str:
    """The log line of that request that names the chat model (waited for: the server
    may not have written it yet)."""

    def found() -> str | None:
        lines = log.read_text().splitlines()
        return next((ln for ln in lines if request_id in ln and "chat" in ln), None)

    return wait_for(
        found, what=lambda: f"request {request_id}'s line in\n{log.read_text()[-3000:]}"
    )
