"""The ledger's Prometheus metrics: operations by result, and its open holds at scrape time.

The ledger knows nothing of the studio: these families are its own
(`ledger_*`). Operations are counted in every process (the studio's
`/metrics` sums them over the machine's processes); open holds are read from
the database when Prometheus scrapes (`HoldsCollector`, registered by the
studio's exposition). Each operation also leaves one log line, once its
transaction commits, so an operator can follow a request (its id is on the
line) to the credits it moved.

Being observed must not cost the ledger its speed (`bench/ledger.py` prints
it with and without): an operation only notes what happened — its op, its
result, a few fields of its row, the time, and the context of the call (the
request id, the job) — on an in-process queue, and a daemon thread of the
process (`FLUSH_SECONDS`) adds the queue's counts to the counter, one `inc`
per label pair, and writes its log lines, each made and formatted there,
with its own time and in the call's context. Before, each operation paid a
labelled lookup and a write to the counter's file, and built, formatted and
wrote its log line under the handler's lock, in the caller's thread, with
every other ledger thread of the process waiting on those locks. A count is
late by `FLUSH_SECONDS` at most and exact once flushed; `flush()` runs at
once before the exposition is read (`/metrics`) and when the process exits,
and the log line is only made when the `ledger` logger's INFO is enabled.
"""

from __future__ import annotations

import atexit
import contextvars
import functools
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import ParamSpec, TypeVar

from django.db import transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone
from prometheus_client import Counter
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from . import errors
from .models import Hold, Transfer

OPERATIONS_TOTAL = "ledger_operations_total"
HOLDS_OPEN = "ledger_holds_open"
HOLDS_OPEN_CREDITS = "ledger_holds_open_credits"
HOLDS_STALE = "ledger_holds_stale"

OK = "ok"
ERROR = "error"  # anything but a refusal: the database away, a bug

# How often the process's noted operations reach the counter and the log.
FLUSH_SECONDS = 0.2

operations = Counter(
    OPERATIONS_TOTAL,
    "Ledger operations by result: ok (counted when committed), or the refusal's code.",
    ["op", "result"],
)

logger = logging.getLogger("ledger")

P = ParamSpec("P")
T = TypeVar("T")

# What an operation leaves: (op, result, times, its row's fields or None, the
# time, the call's context). `times` is 1 but for the sweep's expiries.
Noted = tuple[str, str, int, tuple | None, float, contextvars.Context | None]


def counted(op: str) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """Counts each call of the operation `op` by result and logs it once committed."""

    def decorate(function: Callable[P, T]) -> Callable[P, T]:
        @functools.wraps(function)
        def measured(*args: P.args, **kwargs: P.kwargs) -> T:
            try:
                result = function(*args, **kwargs)
            except errors.LedgerError as exc:
                _notes.note((op, exc.code, 1, None, 0.0, None))
                raise
            except Exception:
                _notes.note((op, ERROR, 1, None, 0.0, None))
                raise
            noted: Noted
            if logger.isEnabledFor(logging.INFO):
                noted = (op, OK, 1, _fields(result), time.time(), contextvars.copy_context())
            else:
                noted = (op, OK, 1, None, 0.0, None)
            transaction.on_commit(functools.partial(_notes.note, noted))
            return result

        return measured

    return decorate


def count_expired(holds: int) -> None:
    """Counts the holds one run of the stale-hold sweep expired (each its own commit)."""
    if holds:
        _notes.note(("expire", OK, holds, None, 0.0, None))


def flush() -> None:
    """Counts and logs every operation noted so far in this process, now."""
    _notes.flush()


def _fields(result: object) -> tuple:
    """What the log line says of `result`, read now (the caller may change it)."""
    if isinstance(result, Hold):
        return (
            Hold,
            result.pk,
            result.account_id,
            result.reference,
            result.state,
            result.amount,
            result.captured_amount,
        )
    if isinstance(result, Transfer):
        return (
            Transfer,
            result.pk,
            result.amount,
            result.debit_account_id,
            result.credit_account_id,
        )
    return (None, str(result))


def describe(op: str, result: object) -> str:
    """The log line of a committed operation."""
    return _line(op, _fields(result))


def _line(op: str, fields: tuple) -> str:
    if fields[0] is Hold:
        _, pk, account_id, reference, state, amount, captured_amount = fields
        held = f"{amount} credit(s)"
        if captured_amount:
            held = f"{captured_amount} of {held}"
        return f"ledger {op}: hold #{pk} of account #{account_id} ({reference}): {state}, {held}"
    if fields[0] is Transfer:
        _, pk, amount, debit_account_id, credit_account_id = fields
        return (
            f"ledger {op}: transfer #{pk}, {amount} credit(s) "
            f"from account #{debit_account_id} to #{credit_account_id}"
        )
    return f"ledger {op}: {fields[1]}"


class _Notes:
    """The process's noted operations and the daemon thread that flushes them.

    Noting is one `deque.append` (atomic, no lock). Flushing takes the
    flush lock, so lines come out in the order noted and no count is added
    twice. A forked child starts empty (its parent flushes what it noted)
    and starts its own thread when it first notes something."""

    def __init__(self) -> None:
        self._queue: deque[Noted] = deque()
        self._flushing = threading.Lock()
        self._thread: threading.Thread | None = None

    def note(self, noted: Noted) -> None:
        self._queue.append(noted)
        if self._thread is None:
            self._start()

    def _start(self) -> None:
        with self._flushing:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._flush_every, name="ledger-metrics", daemon=True
                )
                self._thread.start()

    def _flush_every(self) -> None:
        while True:
            time.sleep(FLUSH_SECONDS)
            try:
                self.flush()
            except Exception:  # a broken handler must not end the counting
                logging.getLogger(__name__).exception("Could not flush the ledger's metrics")

    def flush(self) -> None:
        with self._flushing:
            counts: dict[tuple[str, str], int] = {}
            queue = self._queue
            while queue:
                op, result, times, fields, at, context = queue.popleft()
                counts[op, result] = counts.get((op, result), 0) + times
                if fields is not None and context is not None:
                    context.run(_log, op, fields, at)
            for (op, result), times in counts.items():
                operations.labels(op=op, result=result).inc(times)

    def forked(self) -> None:
        self._queue = deque()
        self._flushing = threading.Lock()
        self._thread = None


def _log(op: str, fields: tuple, at: float) -> None:
    """Writes the line of one committed operation, stamped with when it was noted."""
    if not logger.isEnabledFor(logging.INFO):
        return
    record = logger.makeRecord(logger.name, logging.INFO, __file__, 0, _line(op, fields), (), None)
    record.created = at
    record.msecs = int((at - int(at)) * 1000) + 0.0
    logger.handle(record)


_notes = _Notes()
atexit.register(flush)
os.register_at_fork(after_in_child=_notes.forked)


class HoldsCollector(Collector):
    """Open holds, read from the database at scrape time (one query)."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        now = timezone.now()
        figures = Hold.objects.filter(state=Hold.State.PENDING).aggregate(
            count=Count("pk"),
            credits=Sum("amount"),
            stale=Count("pk", filter=Q(expires_at__lte=now)),
        )
        yield GaugeMetricFamily(HOLDS_OPEN, "Pending holds.", value=figures["count"])
        yield GaugeMetricFamily(
            HOLDS_OPEN_CREDITS, "Credits in pending holds.", value=figures["credits"] or 0
        )
        yield GaugeMetricFamily(
            HOLDS_STALE,
            "Pending holds past their expiry, waiting for the sweep.",
            value=figures["stale"],
        )
