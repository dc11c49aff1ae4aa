"""Faults that pass: a database connection dropped by a failover, Redis away for a moment,
the file storage's bucket unreachable for longer than boto3's own few quick retries.

They are not the work's fault. A task whose work is idempotent (a render: its
attempt and hold are fixed) is sent again after a short wait instead of
failing what the person asked for; the connection the fault broke is closed
first, so that the retry (or this thread's next task) opens a fresh one.
"""

from __future__ import annotations

import redis
from botocore import exceptions as botocore
from django.db import InterfaceError, OperationalError, connections

PASSING_FAULTS = (
    OperationalError,
    InterfaceError,
    redis.ConnectionError,
    redis.TimeoutError,
    # STORAGE_BACKEND=s3: the bucket's endpoint refused, timed out or dropped the
    # connection (not an answer such as 403: that one is no passing fault).
    botocore.ConnectionError,
    botocore.HTTPClientError,
)
# Enough for a failover: 0.5 + 1 + 2 + 4 + 8 × 8 s, about a minute and a quarter.
MAX_FAULT_RETRIES = 12


def backoff(retries: int) -> float:
    """Seconds before trying again after the `retries`-th passing fault: 0.5, 1, 2, 4, 8…"""
    return min(0.5 * 2**retries, 8.0)


def forget_broken_connections() -> None:
    """Closes this thread's database connections that a fault left unusable (as Celery
    does after a task; never one inside a caller's transaction)."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close_if_unusable_or_obsolete()
