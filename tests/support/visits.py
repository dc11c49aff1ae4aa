"""Visits to Review on a running stack (tests/support/stack.py), as the browser makes
them: signed in, reaching Review (with the page's speculation signal or without),
leaving it by its beacons, or clicking Generate and waiting for panel one. Used by
the benchmarks and by the whole-stack tests."""

from __future__ import annotations

import functools
import json
import time
import uuid

import requests
import websocket

from .stack import Stack

PASSWORD = "bench-pass-1234"
PANELS = [
    {"description": "A city at night.", "shot": "establishing"},
    {"description": "Aiko runs.", "shot": "action", "characters": ["Aiko"]},
    {"description": "Kenji waits.", "shot": "medium", "characters": ["Kenji"]},
]
# Aiko in two panels: a comic a judge checks against her sheet (Person.with_a_sheet).
AIKO_RUNS = [
    {"description": "Aiko runs through the station.", "shot": "action", "characters": ["Aiko"]},
    {"description": "Aiko runs on.", "shot": "action", "characters": ["Aiko"]},
]


class Person:
    def __init__(
        self, stack: Stack, username: str, storyboard: int, session_key: str | None = None
    ):
        """Signs in through the login form, or with `session_key` (made by
        `setup_people`) arrives already signed in, as a returning person does."""
        self.stack, self.username, self.storyboard = stack, username, storyboard
        self.http = requests.Session()
        self.http.request = functools.partial(self.http.request, timeout=60)  # never hang
        if session_key is not None:
            self.http.cookies.set("sessionid", session_key, domain="127.0.0.1", path="/")
            return
        login = self.http.get(f"{stack.base_url}/accounts/login/")
        login.raise_for_status()
        self.http.post(
            f"{stack.base_url}/accounts/login/",
            data={
                "username": username,
                "password": PASSWORD,
                "csrfmiddlewaretoken": self.http.cookies["csrftoken"],
            },
            headers={"Referer": f"{stack.base_url}/accounts/login/"},
        ).raise_for_status()

    def csrf(self) -> dict[str, str]:
        """The header a request that changes something carries."""
        if "csrftoken" not in self.http.cookies:  # signed in by session: no form seen yet
            self.http.get(f"{self.stack.base_url}/").raise_for_status()
        return {"X-CSRFToken": self.http.cookies["csrftoken"]}

    def post(self, path: str, body: dict | None = None) -> requests.Response:
        return self.http.post(f"{self.stack.base_url}{path}", json=body or {}, headers=self.csrf())

    def credits(self) -> tuple[int, int]:
        """The person's credits: (available, held)."""
        me = self.http.get(f"{self.stack.base_url}/api/me/").json()["credits"]
        return me["available"], me["held"]

    def with_a_sheet(self, sheet: bytes, panels: list[dict] = AIKO_RUNS) -> None:
        """The person's comic becomes `panels` with Aiko (red scarf) in them, and `sheet`
        her uploaded reference sheet."""
        base = f"{self.stack.base_url}/api/storyboards/{self.storyboard}"
        patched = self.http.patch(
            f"{base}/",
            json={"characters": [{"name": "Aiko", "description": "red scarf"}], "panels": panels},
            headers=self.csrf(),
        )
        assert patched.status_code == 200, patched.text
        uploaded = self.http.put(
            f"{base}/characters/Aiko/sheet/",
            files={"image": ("aiko.png", sheet, "image/png")},
            headers=self.csrf(),
        )
        assert uploaded.status_code == 200, uploaded.text

    def reach_review(self, *, speculate: bool, debounce: float) -> int | None:
        """Opens Review and, after the debounce, asks as the page does (with its token).
        The answer is kept in `self.answer`; returns the speculative job, if any."""
        self.http.get(f"{self.stack.base_url}/comics/{self.storyboard}/review/").raise_for_status()
        self.token, self.answer = None, None
        if not speculate:
            return None
        time.sleep(debounce)
        self.token = uuid.uuid4().hex
        self.answer = self.post(
            f"/api/storyboards/{self.storyboard}/speculate/", {"token": self.token}
        ).json()
        return self.answer["job"]

    def leave(self, job: int | None) -> None:
        """Leaves Review as the page's beacons do."""
        if self.token:
            self.post(f"/api/storyboards/{self.storyboard}/speculate/leave/", {"token": self.token})
        if job:
            self.post(f"/api/jobs/{job}/cancel/?if_unconfirmed=1")

    def generate_and_wait(self) -> tuple[float, bool]:
        """Seconds from the Generate call to panel one's image in hand, and whether
        attached. When Generate's answer carries panel one (`delivered`: it attached
        to a finished speculation), the page shows it from there: the clock stops
        when its image has arrived. Otherwise it stops at `panel.delivered` for
        panel one on the job's websocket (the job page's own path)."""
        started = time.monotonic()
        answer = self.post(f"/api/storyboards/{self.storyboard}/generate/").json()
        self.post_seconds = time.monotonic() - started  # the Generate request alone
        self.job = answer["job"]
        first = [p for p in answer.get("delivered", []) if p["index"] == 1]
        if first:
            image = self.http.get(f"{self.stack.base_url}{first[0]['image_url']}")
            image.raise_for_status()
            elapsed = time.monotonic() - started
            self.post(f"/api/jobs/{answer['job']}/cancel/")
            return elapsed, answer["attached"]
        socket = websocket.create_connection(
            f"ws://127.0.0.1:{self.stack.port}/ws/jobs/{answer['job']}/?after=0",
            cookie="; ".join(f"{k}={v}" for k, v in self.http.cookies.items()),
            origin=self.stack.base_url,
            timeout=60,
        )
        try:
            while True:
                if time.monotonic() - started > 120:
                    raise TimeoutError(f"job {answer['job']}: no panel one in 120 s")
                event = json.loads(socket.recv())
                if event["type"] == "panel.failed" and event["data"]["index"] == 1:
                    raise RuntimeError(f"job {answer['job']}: panel one failed: {event['data']}")
                if event["type"] == "panel.delivered" and event["data"]["index"] == 1:
                    elapsed = time.monotonic() - started
                    break
        finally:
            socket.close()
        self.post(f"/api/jobs/{answer['job']}/cancel/")
        return elapsed, answer["attached"]


def setup_people(stack: Stack, count: int, prefix: str) -> list[tuple[str, int, str]]:
    """Makes `count` people with 50 credits and a storyboard each: (username,
    storyboard, a signed-in session key)."""
    code = f"""
from importlib import import_module
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.auth.hashers import make_password
from ledger import services as ledger
from mangagen.storyboards import services as boards
SessionStore = import_module(settings.SESSION_ENGINE).SessionStore
made = []
hashed = make_password("{PASSWORD}")  # once: hashing it for each person takes minutes
for i in range({count}):
    user = get_user_model().objects.create(username="{prefix}" + str(i), password=hashed)
    ledger.grant(account=ledger.account_for(user), amount=50, key="bench-" + user.username,
                 reason="bench")
    board = boards.create_storyboard(owner=user, title="Bench " + str(i))
    boards.update_storyboard(storyboard=board, panels={PANELS!r},
                             characters=[{{"name": "Aiko"}}, {{"name": "Kenji"}}])
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    made.append((user.username, board.pk, session.session_key))
print(made)
"""
    import ast

    return ast.literal_eval(stack.shell(code).strip().splitlines()[-1])
