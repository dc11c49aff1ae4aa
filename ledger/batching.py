"""Group commit for the fast path: concurrent operations share one statement.

A ledger operation on PostgreSQL is one stored-function call, and in
autocommit that call is its own transaction: one round trip and one commit,
whose WAL fsync is most of its time. When several threads of one process
call the ledger at once (render workers run dozens of threads), each would
pay its own commit. The combiner lets them share it, as TigerBeetle's
clients do: the first caller becomes the *leader* and runs its operation at
once; callers arriving while a statement is on the wire queue up, and when
it returns the leader hands leadership to the oldest of them, which sends
everything queued (up to `MAX_BATCH`) as one `ledger_batch` call: one round
trip, one transaction, one commit for all of them.

Nothing about an operation changes: the batch runs each through the same
stored function, in the order they came (a batch is one account's
operations: see `combiner`), after locking the holds they resolve, as a
single call locks its hold before the account (migration 0012), and each
caller gets exactly the row its own call would have returned. If the batch
statement fails as a whole (a refusal that had to undo its own rows, a
deadlock, a lost connection), nothing of it was committed, and each
operation runs again alone, raising its own error to its own caller. A
caller inside a transaction never comes here: its operation belongs to that
transaction.

No timer is involved: a lone caller waits for no one, and a batch forms only
from callers that would otherwise have queued on the database anyway.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connections

from . import errors

logger = logging.getLogger(__name__)

# Each batch holds its rows' locks until its one commit; a bounded batch
# bounds that time (and the latency of the last operation in it).
MAX_BATCH = 32

# Why a batch may fail now and then, with nothing wrong: a refusal that had to
# undo its own rows, or a deadlock with a caller outside the combiner. Any
# other failure is a fault of the batch statement and is logged as one.
EXPECTED_BATCH_FAILURES = frozenset(
    {errors.SQLSTATE_FLAGGED, errors.SQLSTATE_INSUFFICIENT, "40P01", "40001"}
)


@dataclass(slots=True)
class Operation:
    """One ledger operation as both paths need it: the single statement (run
    alone) and its values for `ledger_batch`'s arrays (run with others)."""

    op: str  # "a" (authorize) or "r" (resolve)
    account_id: int  # the user account whose rows it locks: the batch's order
    run_alone: Callable[[Any], tuple]  # (connection) -> the row of the single call
    hold_id: int | None = None
    amount: int | None = None
    key: str = ""
    reference: str | None = None
    now: datetime | None = None
    expires_at: datetime | None = None
    kind: str | None = None
    state: str | None = None
    explicit_key: bool = False
    reason: str | None = None
    actor_id: int | None = None
    sweep: bool = False


@dataclass(slots=True)
class _Slot:
    operation: Operation
    # Made only for a caller that must wait: a lone caller never waits.
    ready: threading.Event | None = None
    row: tuple | None = None
    error: BaseException | None = None
    lead: bool = False  # woken to lead the next batch rather than with a result


class Combiner:
    """Per process and database alias: at most one statement on the wire, and
    the callers who arrive meanwhile share the next one."""

    def __init__(
        self,
        alias: str,
        run_batch: Callable[[Any, Sequence[Operation]], list[tuple]],
        key: tuple[str, int],
    ):
        self.alias = alias
        self.key = key
        self._run_batch = run_batch
        self._mutex = threading.Lock()
        self._queue: list[_Slot] = []
        self._busy = False

    def run(self, operation: Operation) -> tuple:
        slot = _Slot(operation)
        with self._mutex:
            self._queue.append(slot)
            follower = self._busy
            self._busy = True
            if follower:
                slot.ready = threading.Event()
        if follower:
            assert slot.ready is not None
            slot.ready.wait()
            if not slot.lead:
                return self._answer(slot)
        # Leading: this slot is first in the queue; take it and those behind it.
        with self._mutex:
            batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
        try:
            self._execute(batch)
        finally:
            for other in batch:
                if other.row is None and other.error is None:
                    other.error = RuntimeError(
                        "The ledger batch was interrupted: retry with the same key."
                    )
            with self._mutex:
                if self._queue:
                    successor = self._queue[0]
                    successor.lead = True
                    assert successor.ready is not None  # it queued behind a busy leader
                    successor.ready.set()
                else:
                    self._busy = False
            for other in batch:
                if other is not slot and other.ready is not None:
                    other.ready.set()
            _forget(self)
        return self._answer(slot)

    @staticmethod
    def _answer(slot: _Slot) -> tuple:
        if slot.error is not None:
            raise slot.error
        assert slot.row is not None
        return slot.row

    def _execute(self, batch: list[_Slot]) -> None:
        db = connections[self.alias]
        if len(batch) > 1:
            try:
                rows = self._run_batch(db, [slot.operation for slot in batch])
            except Exception as exc:
                # Nothing was committed: run each alone, below.
                state = getattr(exc.__cause__, "sqlstate", None)
                expected = state in EXPECTED_BATCH_FAILURES
                logger.log(
                    logging.DEBUG if expected else logging.WARNING,
                    "ledger batch of %d failed (%s: %s); running each alone",
                    len(batch),
                    type(exc).__name__,
                    exc,
                    exc_info=not expected,
                )
            else:
                for slot, row in zip(batch, rows, strict=True):
                    slot.row = row
                return
        for slot in batch:
            try:
                slot.row = slot.operation.run_alone(db)
            except BaseException as exc:  # the caller's own error, raised in its thread
                slot.error = exc


live_combiners: dict[tuple[str, int], Combiner] = {}
_combiners_mutex = threading.Lock()


def combiner(
    alias: str, account_id: int, run_batch: Callable[[Any, Sequence[Operation]], list[tuple]]
) -> Combiner:
    """The combiner of `account_id`'s operations. Operations on one account
    would queue on its row lock anyway, each holding it through its own
    commit; operations on different accounts never share a batch (nor a lock
    order the single path does not already have) and run side by side."""
    key = (alias, account_id)
    with _combiners_mutex:
        found = live_combiners.get(key)
        if found is None:
            found = live_combiners[key] = Combiner(alias, run_batch, key)
        return found


def _forget(found: Combiner) -> None:
    """Drops an idle combiner, so the registry holds only busy accounts. A
    caller that fetched it just before runs it as its own leader: correct,
    merely unshared."""
    with _combiners_mutex, found._mutex:
        if not found._busy and live_combiners.get(found.key) is found:
            del live_combiners[found.key]
