"""One metrics folder for every process of a machine, by default.

prometheus_client sums the counts of several processes only when each writes them to
files in one folder, `PROMETHEUS_MULTIPROC_DIR`, read from the environment when the
client is first imported, and emptied before the processes start (its documentation:
"the directory must be wiped between runs"). Without it every process counts alone, and
the web process answering `/metrics` never sees what the Celery workers counted: a
dashboard reads zero renders delivered.

So the Procfile's supervisors (`bin/web`, `bin/keep-running`: every process of the
Procfile starts under one) call `join()` before they start anything. Where the variable
is set (`manage.py runstack`, a systemd unit, a Kubernetes pod), whoever set it prepares
the folder, and nothing happens here. Unset, every process of the machine gets the same
folder, `var/metrics/machine/` in the checkout, created at start; the first process of a
run empties it. A run is the processes alive together: each that joins leaves a member
file naming itself, and a process that finds no member alive (the machine was stopped,
or crashed) empties the folder before it joins, under a lock, so that processes started
at once agree on who does. A process restarted while the others run (its supervisor
restarts it, or one of several) joins without emptying: a counter's sum never goes down.

Standard library only: the supervisors load this file before anything of the app.
"""

from __future__ import annotations

import atexit
import fcntl
import os
from pathlib import Path

VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
DEFAULT = Path(__file__).resolve().parents[2] / "var" / "metrics" / "machine"
_MEMBER = "member-{pid}"


def join(environ=os.environ, *, folder: Path = DEFAULT, pid: int | None = None) -> Path | None:
    """Gives this process (and what it starts, through `environ`) the machine's metrics
    folder when `environ` names none: created, emptied if no member of a run is alive,
    and joined (left again at exit). Returns the folder, or None when it was set."""
    if environ.get(VARIABLE):
        return None
    pid = os.getpid() if pid is None else pid
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        members = list(folder.glob(_MEMBER.format(pid="*")))
        if not any(_alive(member) for member in members):
            for leftover in [*folder.glob("*.db"), *members]:  # the files of the run before
                leftover.unlink(missing_ok=True)
        member = folder / _MEMBER.format(pid=pid)
        member.write_text(_started(pid))
    atexit.register(member.unlink, missing_ok=True)
    environ[VARIABLE] = str(folder)
    return folder


def _alive(member: Path) -> bool:
    """Whether the process a member file names still runs (and is the same process: a
    new one given its number started later)."""
    try:
        pid = int(member.name.rsplit("-", 1)[1])
        os.kill(pid, 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        pass  # another user's process: it runs
    try:
        return member.read_text() == _started(pid)
    except OSError:
        return False


def _started(pid: int) -> str:
    """When process `pid` started, as the kernel counts it (Linux); "" where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    # Fields after the command name, which may hold spaces: the 22nd field is the start.
    return stat.rsplit(")", 1)[1].split()[19]
