"""Waiting in tests on a condition, never on the clock alone."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(
    predicate: Callable[[], T], *, timeout: float = 30, every: float = 0.05, what: str = "it"
) -> T:
    """Looks at `predicate` until it is truthy and returns what it returned; fails the
    test after `timeout` seconds, saying what never happened."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(every)
