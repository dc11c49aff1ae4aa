"""Waiting in tests on a condition, never on the clock alone: the one poll-until helper."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(
    predicate: Callable[[], T],
    *,
    timeout: float = 30,
    every: float = 0.05,
    what: str | Callable[[], str] = "it",
) -> T:
    """Looks at `predicate` until it is truthy and returns what it returned; fails the
    test after `timeout` seconds, saying what never happened and the last answer.

    `what` may be a function, asked only at the timeout (for what is known only then:
    the events seen so far, a log's tail)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            said = what() if callable(what) else what
            raise AssertionError(f"timed out waiting for {said} (last: {value!r})")
        time.sleep(every)
