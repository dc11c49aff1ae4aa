"""`bin/web`: WEB_PROCESSES daphne processes serve one listening socket, a killed one is
started again while the others serve, and they stop together."""

import contextlib
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from tests.support.stack import ROOT, free_port, fresh_database_url
from tests.support.waiting import wait_for


def children_of(pid: int) -> list[int]:
    found = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in found.read_text().split()] if found.exists() else []


@contextlib.contextmanager
def web(tmp_path: Path, database: str) -> Iterator[tuple[subprocess.Popen, str, list[int]]]:
    """bin/web with two processes: (the launcher, a URL it serves, its daphne processes)."""
    port = free_port()
    env = {
        **os.environ,
        "DEBUG": "on",
        "DATABASE_URL": fresh_database_url(database),
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "WEB_PROCESSES": "2",
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    log = (tmp_path / "web.log").open("w")
    launcher = subprocess.Popen(
        [sys.executable, "bin/web"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        daphnes = wait_for(
            lambda: len(children_of(launcher.pid)) == 2 and children_of(launcher.pid),
            timeout=60,
            every=0.1,
            what="two daphne processes",
        )
        url = f"http://127.0.0.1:{port}/accounts/login/"
        wait_for(lambda: answers(url), timeout=60, every=0.1, what="the first answer")
        yield launcher, url, daphnes
    finally:
        launcher.send_signal(signal.SIGTERM)
        launcher.wait(timeout=60)
        log.close()


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def test_two_processes_serve_one_port_and_stop_together(tmp_path):
    with web(tmp_path, "web_processes") as (launcher, url, daphnes):
        assert all(answers(url) for _ in range(20))  # whichever process takes each connection
    assert launcher.returncode is not None
    for pid in daphnes:  # none outlives the launcher
        assert (
            not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
        )


def test_a_killed_process_is_started_again_while_the_other_serves(tmp_path):
    with web(tmp_path, "web_restart") as (launcher, url, daphnes):
        os.kill(daphnes[0], signal.SIGKILL)
        # The other keeps serving, and the dead one is replaced on the same socket.
        wait_for(lambda: answers(url), timeout=60, every=0.1, what="an answer after the kill")
        replaced = wait_for(
            lambda: len(now := children_of(launcher.pid)) == 2 and daphnes[0] not in now and now,
            timeout=60,
            every=0.1,
            what="a new process in the dead one's place",
        )
        assert daphnes[1] in replaced
        assert all(answers(url) for _ in range(10))
        assert launcher.poll() is None  # the launcher carries on
