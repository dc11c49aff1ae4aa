import time

import pytest
from rest_framework.throttling import ScopedRateThrottle

from mangagen.publishing import page_throttle, serving


@pytest.fixture(autouse=True)
def _fresh_reading_memory():
    """Each test starts with this process's memory of links, files and counts empty, as
    it starts with a cache of its own (the root conftest's `_private_cache`)."""
    serving.forget_everything()
    yield
    serving.forget_everything()


@pytest.fixture
def frozen_clock(monkeypatch):
    """The throttles' clock stopped early in a window of their period, so that no
    window ends in the middle of a test and starts its counts afresh."""
    now = time.time() // 86400 * 86400 + 1.0
    monkeypatch.setattr(page_throttle, "clock", lambda: now)
    monkeypatch.setattr(ScopedRateThrottle, "timer", lambda self: now)
    return now
