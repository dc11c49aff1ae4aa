"""What one signed-in account can hold open and make the server keep, on the real server.

Starts the web process (`bin/web`, daphne) on a fresh database and a Redis
database of its own, signs one person up, and pushes past each per-person bound
the way a script would, through HTTP and websockets:

- job streams opened until the server refuses one (4429), and the Redis bytes
  their slots take; then the streams' slots given back;
- speculate / leave pairs sent as fast as one client goes for a few seconds:
  how many were answered, how many throttled, and the rows they left;
- wrong passwords for one username: how many were checked before the lockout;
- every key the person has in Redis at the end, and their bytes.

Not a test; run it with

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/mangagen REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/account_bounds.py
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis
import websocket

from tests.support.people import Visitor
from tests.support.stack import ROOT, WebServer, migrated_database_url, redis_url

PANELS = [{"description": "Aiko runs.", "characters": ["Aiko"]}, {"description": "Aiko waits."}]


def person_key_bytes(client: redis.Redis, user_id: int) -> tuple[int, int]:
    """(keys, bytes) of every Redis key that names the person's id as a part."""
    keys = [
        k
        for k in client.scan_iter("*")
        if f":{user_id}:" in k.decode(errors="replace")
        or k.decode(errors="replace").endswith(f"_{user_id}")
    ]
    return len(keys), sum(client.memory_usage(k) or 0 for k in keys)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="each flood's length")
    args = parser.parse_args()
    database = migrated_database_url("bounds")
    redis_at = redis_url(13)
    store = redis.Redis.from_url(redis_at)
    store.flushdb()
    env = {"DATABASE_URL": database, "REDIS_URL": redis_at}
    with WebServer(env=env, log=ROOT / "var" / "bounds-web.log") as web:
        person = Visitor(web.base_url)
        assert person.post("/credits/demo/", allow_redirects=False).status_code == 302
        user_id = int(
            web.shell(
                "from django.contrib.auth import get_user_model;"
                f"print(get_user_model().objects.get(username='{person.username}').pk)"
            ).strip()
        )
        board = person.post("/api/storyboards/", {"title": "Bounds", "story": "Aiko runs."})
        board_id = board.json()["id"]
        person.request(
            "PATCH",
            f"/api/storyboards/{board_id}/",
            json={"characters": [{"name": "Aiko"}], "panels": PANELS},
        )
        job = person.post(f"/api/storyboards/{board_id}/generate/").json()["job"]
        results: dict[str, object] = {}

        streams = []
        while True:
            socket = person.websocket(f"/ws/jobs/{job}/")
            socket.send(json.dumps({"type": "ping"}))
            opcode, data = socket.recv_data(control_frame=True)
            if opcode == websocket.ABNF.OPCODE_CLOSE:
                refused_with = int.from_bytes(data[:2], "big")
                break
            streams.append(socket)
        slots = [k for k in store.scan_iter("*ws-slot*")]
        results["streams open at once"] = len(streams)
        results["the next one closed with"] = refused_with
        results["Redis bytes of their slots"] = sum(store.memory_usage(k) or 0 for k in slots)
        for socket in streams:
            socket.close()

        answered = throttled = 0
        ends = time.monotonic() + args.seconds
        n = 0
        while time.monotonic() < ends:
            n += 1
            token = f"flood-{n}"
            for path, body in (
                (f"/api/storyboards/{board_id}/speculate/", {"token": token}),
                (f"/api/storyboards/{board_id}/speculate/leave/", {"token": token}),
            ):
                status = person.post(path, body).status_code
                answered += status < 400
                throttled += status == 429
        results[f"speculate/leave pairs sent in {args.seconds:g} s"] = n
        results["requests answered / throttled"] = f"{answered} / {throttled}"

        guesser = Visitor(web.base_url, sign_up=False)
        checked = locked = 0
        for attempt in range(40):
            answer = guesser.http.post(
                f"{web.base_url}/accounts/login/",
                data={
                    "username": person.username,
                    "password": f"wrong-{attempt}",
                    "csrfmiddlewaretoken": guesser.csrf,
                },
                headers={"Referer": f"{web.base_url}/accounts/login/"},
                allow_redirects=False,
            )
            checked += answer.status_code == 200
            locked += answer.status_code == 429
        results["wrong passwords checked / refused unchecked"] = f"{checked} / {locked}"

        rows = web.shell(
            "from speculation.models import Speculation;"
            f"print(Speculation.objects.filter(user_id={user_id}).count())"
        ).strip()
        results["speculation rows the flood left"] = rows
        keys, held = person_key_bytes(store, user_id)
        results["the person's Redis keys at the end"] = f"{keys} keys, {held:,} bytes"
        redis_total = store.info("memory")["used_memory_dataset"]
        results["this Redis database's data in all"] = f"{redis_total:,} bytes"
    width = max(len(k) for k in results)
    for key, value in results.items():
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
