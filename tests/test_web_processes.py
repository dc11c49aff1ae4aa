"""`bin/web`: WEB_PROCESSES daphne processes serve one listening socket, and stop together."""

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.support.stack import ROOT, free_port, fresh_database_url


def children_of(pid: int) -> list[int]:
    found = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in found.read_text().split()] if found.exists() else []


def wait_for(check, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while not (result := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)
    return result


def test_two_processes_serve_one_port_and_stop_together(tmp_path):
    port = free_port()
    env = {
        **os.environ,
        "DEBUG": "on",
        "DATABASE_URL": fresh_database_url("web_processes"),
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "WEB_PROCESSES": "2",
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    log = (tmp_path / "web.log").open("w")
    web = subprocess.Popen(
        [sys.executable, "bin/web"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        daphnes = wait_for(lambda: len(children_of(web.pid)) == 2 and children_of(web.pid), "two")

        def answers() -> bool:
            try:
                url = f"http://127.0.0.1:{port}/accounts/login/"
                with urllib.request.urlopen(url, timeout=5) as response:
                    return response.status == 200
            except OSError:
                return False

        wait_for(answers, "the first answer")
        assert all(answers() for _ in range(20))  # whichever process takes each connection
    finally:
        web.send_signal(signal.SIGTERM)
        code = web.wait(timeout=60)
        log.close()
    assert code is not None
    for pid in daphnes:  # none outlives the launcher
        assert (
            not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
        )
