"""The ledger's Prometheus metrics: operations by result, and its open holds at scrape time.

The ledger knows nothing of the studio: these families are its own
(`ledger_*`). Operations are counted where they happen, in every process
(the studio's `/metrics` sums them over the machine's processes); open holds
are read from the database when Prometheus scrapes (`HoldsCollector`,
registered by the studio's exposition). Each operation also leaves one log
line, once its transaction commits, so an operator can follow a request (its
id is on the line) to the credits it moved.
"""

from __future__ import annotations

import functools
import logging
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

operations = Counter(
    OPERATIONS_TOTAL,
    "Ledger operations by result: ok (counted when committed), or the refusal's code.",
    ["op", "result"],
)

logger = logging.getLogger("ledger")

P = ParamSpec("P")
T = TypeVar("T")


def counted(op: str) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """Counts each call of the operation `op` by result and logs it once committed."""

    def decorate(function: Callable[P, T]) -> Callable[P, T]:
        @functools.wraps(function)
        def measured(*args: P.args, **kwargs: P.kwargs) -> T:
            try:
                result = function(*args, **kwargs)
            except errors.LedgerError as exc:
                operations.labels(op=op, result=exc.code).inc()
                raise
            except Exception:
                operations.labels(op=op, result=ERROR).inc()
                raise
            line = describe(op, result)
            transaction.on_commit(lambda: _committed(op, line))
            return result

        return measured

    return decorate


def _committed(op: str, line: str) -> None:
    operations.labels(op=op, result=OK).inc()
    logger.info(line)


def count_expired(holds: int) -> None:
    """Counts the holds one run of the stale-hold sweep expired (each its own commit)."""
    if holds:
        operations.labels(op="expire", result=OK).inc(holds)


def describe(op: str, result: object) -> str:
    """The log line of a committed operation."""
    if isinstance(result, Hold):
        held = f"{result.amount} credit(s)"
        if result.captured_amount:
            held = f"{result.captured_amount} of {held}"
        return (
            f"ledger {op}: hold #{result.pk} of account #{result.account_id}"
            f" ({result.reference}): {result.state}, {held}"
        )
    if isinstance(result, Transfer):
        return (
            f"ledger {op}: transfer #{result.pk}, {result.amount} credit(s) "
            f"from account #{result.debit_account_id} to #{result.credit_account_id}"
        )
    return f"ledger {op}: {result}"


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
