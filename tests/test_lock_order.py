"""One lock order for every path that creates, confirms, replaces or ends a job
(issue #23 §3b): the person's row (speculation only), then the comic's row, then
its jobs, their panels, the sheets, and the ledger's own rows.

Fuzzing once found `POST …/speculate/` answering 500 with a deadlock: one
transaction held the comic's row FOR UPDATE and waited on the one-live-job index
for a second one, whose commit waited for the comic's row (PostgreSQL checks a
new row's foreign key to the comic at commit, with a KEY SHARE lock, which FOR
UPDATE blocks). Every path now takes the comic's row first, through
`storyboards.lock_objects.lock_storyboard`, and FOR NO KEY UPDATE, which a
foreign key check never waits for.

Two tests: each request alone, with every row lock it takes recorded in order
per transaction (the order is checked, whatever the timing); and each pair of
them fired at once on two connections, answering no 5xx.
"""

from __future__ import annotations

import itertools
import re
import threading
from dataclasses import dataclass, field

import pytest
from django.db import connection
from django.test import Client

from ledger import services as ledger
from speculation import services as speculation
from tests.support import factories

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    # Renders and sheet renders are recorded, not sent to a worker.
    pytest.mark.usefixtures("instant_renders", "enqueued", "sheet_queue"),
]

# Rank of each table in the one order (a lower rank is locked first).
ORDER = {
    "auth_user": 0,
    "mangagen_storyboard": 1,
    "mangagen_charactersheet": 2,
    "mangagen_job": 2,
    "mangagen_jobpanel": 3,
}
LOCK = re.compile(r'FROM "(\w+)".*FOR (NO KEY UPDATE|UPDATE)', re.S)


@dataclass
class Scene:
    """A person with credits, a comic with a character, and a live speculation of it."""

    user: object
    board: int
    job: int
    token: str = "review-1"
    locks: list = field(default_factory=list)


def scene(make_user) -> Scene:
    user = make_user()
    factories.funded_account(user, 20)
    board = factories.storyboard(
        user,
        characters=[{"name": "Aiko", "description": "red scarf"}],
        panels=[
            {"description": "Aiko runs.", "characters": ["Aiko"]},
            {"description": "Aiko waits.", "characters": ["Aiko"]},
        ],
    )
    live = speculation.speculate(user=user, storyboard=board, token="review-1")
    assert live.job_id is not None, live.reason
    return Scene(user=user, board=board.pk, job=live.job_id)


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


REQUESTS = {
    "speculate": lambda c, s: c.post(
        f"/api/storyboards/{s.board}/speculate/",
        {"token": "review-2"},
        content_type="application/json",
    ),
    "generate": lambda c, s: c.post(f"/api/storyboards/{s.board}/generate/"),
    "leave": lambda c, s: c.post(
        f"/api/storyboards/{s.board}/speculate/leave/", {"token": s.token}
    ),
    "cancel": lambda c, s: c.post(f"/api/jobs/{s.job}/cancel/"),
    "patch": lambda c, s: c.patch(
        f"/api/storyboards/{s.board}/",
        {"panels": [{"description": "Aiko runs fast.", "characters": ["Aiko"]}]},
        content_type="application/json",
    ),
    "delete": lambda c, s: c.delete(f"/api/storyboards/{s.board}/"),
    "sheet": lambda c, s: c.post(f"/api/storyboards/{s.board}/characters/Aiko/sheet/"),
}


def recorded_locks(calls):
    """Runs `calls` with every row lock recorded as (transaction id, table, mode, the
    statement's integer parameters: the locked rows' ids, or what selects them)."""
    locks: list[tuple[int, str, str, frozenset]] = []

    def wrapper(execute, sql, params, many, context):
        found = LOCK.search(sql)
        if found:
            with context["connection"].connection.cursor() as cursor:
                cursor.execute("SELECT txid_current()")
                txid = cursor.fetchone()[0]
            ids = frozenset(p for p in (params or ()) if isinstance(p, int))
            locks.append((txid, found.group(1), found.group(2), ids))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        answer = calls()
    return answer, locks


@pytest.mark.parametrize("name", list(REQUESTS))
def test_each_path_locks_the_comic_first_and_without_its_key(make_user, name):
    s = scene(make_user)
    answer, locks = recorded_locks(lambda: REQUESTS[name](client_of(s.user), s))
    assert answer.status_code < 500, answer.content
    comic = [mode for _, table, mode, _ in locks if table == "mangagen_storyboard"]
    assert comic, f"{name} never locked the comic's row"
    assert set(comic) == {"NO KEY UPDATE"}, f"{name} locked the comic's row with its key"
    by_transaction: dict[int, list[tuple[str, frozenset]]] = {}
    for txid, table, _, ids in locks:
        by_transaction.setdefault(txid, []).append((table, ids))
    for taken in by_transaction.values():
        held: set[int] = set()  # comics (and people) locked before the first job
        past_a_job = False
        for table, ids in taken:
            rank = ORDER.get(table)
            if rank is None:
                continue
            if rank >= 2:
                past_a_job = True
            elif not past_a_job:
                held |= ids
            else:  # after a job, only a row already held may be named again
                assert ids <= held, (
                    f"{name} locked {table} {sorted(ids)} after a job: {[t for t, _ in taken]}"
                )


PAIRS = list(itertools.combinations_with_replacement(REQUESTS, 2))


@pytest.mark.parametrize(("first", "second"), PAIRS, ids=["+".join(p) for p in PAIRS])
def test_any_two_at_once_answer_without_a_server_error(make_user, race, first, second):
    s = scene(make_user)
    clients = [client_of(s.user), client_of(s.user)]
    answers = race(
        [lambda: REQUESTS[first](clients[0], s), lambda: REQUESTS[second](clients[1], s)]
    )
    for name, answer in zip((first, second), answers, strict=True):
        assert not isinstance(answer, Exception), f"{name}: {answer!r}"
        assert answer.status_code < 500, f"{name}: {answer.status_code} {answer.content[:300]}"
    assert threading.active_count() < 50  # the race's threads all ended
    ledger.account_for(s.user)  # the ledger still reads
