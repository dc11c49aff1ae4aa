"""Injecting the faults of normal life into a running stack (tests and bench/faults.py).

Each touches only what the stack owns: its own database's connections, its
own Redis's clients, its own processes.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import redis


def descendants(pid: int) -> list[tuple[int, str]]:
    """Every process under `pid`, with its command line."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            try:
                cmdline = (Path("/proc") / str(child) / "cmdline").read_bytes()
            except OSError:
                continue
            found.append((child, cmdline.replace(b"\0", b" ").decode()))
            todo.append(child)
    return found


def processes(root: int, *needles: str) -> list[int]:
    """The processes under `root` whose command line has every needle (supervisors aside)."""
    return [
        pid
        for pid, cmdline in descendants(root)
        if all(n in cmdline for n in needles) and "keep-running" not in cmdline
    ]


def kill(root: int, *needles: str, every: bool = False) -> list[int]:
    """SIGKILLs the first (or `every`) process under `root` matching the needles."""
    found = processes(root, *needles)
    if not found:
        raise RuntimeError(f"no process with {needles}")
    for pid in found if every else found[:1]:
        os.kill(pid, signal.SIGKILL)
    return found if every else found[:1]


def drop_database_connections(database_url: str) -> int:
    """Terminates every connection to that database (pg_terminate_backend), as a failover
    does; returns how many."""
    parts = urlsplit(database_url)
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        return len(
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                [parts.path.lstrip("/")],
            ).fetchall()
        )


def drop_redis_clients(port: int) -> int:
    """Redis drops every ordinary client (`CLIENT KILL TYPE normal`); returns how many."""
    return redis.Redis(port=port).client_kill_filter(_type="normal")
