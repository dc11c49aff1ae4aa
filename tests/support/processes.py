"""What a running stack's processes hold, read from /proc (Linux): which process serves a
port, its resident memory and its peak, and the temporary files every process keeps
in a folder (unlinked ones too, as Python's TemporaryFile makes them)."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

PROC = Path("/proc")


def _listening_inodes(port: int) -> set[str]:
    inodes = set()
    for table in ("net/tcp", "net/tcp6"):
        with contextlib.suppress(FileNotFoundError):
            for line in (PROC / table).read_text().splitlines()[1:]:
                fields = line.split()
                local, state, inode = fields[1], fields[3], fields[9]
                if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                    inodes.add(inode)
    return inodes


def _fds(pid: int):
    with contextlib.suppress(OSError):
        for fd in os.listdir(PROC / str(pid) / "fd"):
            with contextlib.suppress(OSError):
                yield fd, os.readlink(PROC / str(pid) / "fd" / fd)


def _pids() -> list[int]:
    return [int(name) for name in os.listdir(PROC) if name.isdigit()]


def serving(port: int, *, command: str) -> list[int]:
    """The processes whose command line holds `command` that have the socket listening
    on `port` open (bin/web's daphne processes share the one it opened)."""
    sockets = {f"socket:[{inode}]" for inode in _listening_inodes(port)}
    found = []
    for pid in _pids():
        try:
            cmdline = (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if command in cmdline and any(target in sockets for _, target in _fds(pid)):
            found.append(pid)
    return found


def _status(pid: int, field: str) -> int:
    for line in (PROC / str(pid) / "status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise LookupError(field)


def resident_bytes(pid: int) -> int:
    return _status(pid, "VmRSS")


def reset_peak(pid: int) -> None:
    """Starts the process's peak resident memory (VmHWM) afresh from now."""
    (PROC / str(pid) / "clear_refs").write_text("5")


def peak_resident_bytes(pid: int) -> int:
    """The most resident memory the process had since reset_peak."""
    return _status(pid, "VmHWM")


def temporary_bytes(folder: Path) -> int:
    """The bytes of every file in `folder`: those it lists, and those any process holds
    open there after unlinking them, each counted once."""
    seen: dict[tuple[int, int], int] = {}
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            stat = path.stat()
            if path.is_file():
                seen[(stat.st_dev, stat.st_ino)] = stat.st_size
    prefix = str(folder)
    for pid in _pids():
        for fd, target in _fds(pid):
            if target.startswith(prefix):
                with contextlib.suppress(OSError):
                    stat = os.stat(PROC / str(pid) / "fd" / fd)
                    seen[(stat.st_dev, stat.st_ino)] = stat.st_size
    return sum(seen.values())


class Peak:
    """The most `measure()` returned while the block ran, read every `every` seconds by
    a thread of its own (a measurement, not a wait: nothing waits on it)."""

    def __init__(self, measure, every: float = 0.02):
        self.measure, self.every = measure, every
        self.most = 0
        self._done = threading.Event()

    def _run(self) -> None:
        while not self._done.is_set():
            self.most = max(self.most, self.measure())
            self._done.wait(self.every)

    def __enter__(self) -> Peak:
        self.most = self.measure()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()
        self.most = max(self.most, self.measure())
