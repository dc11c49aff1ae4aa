"""Start and stop the whole stack (`manage.py runstack`) on its own database.

Used by the browser tests, tests/stack/test_redis_restart.py and the benchmarks
(bench/): daphne, both Celery workers and beat, exactly as `make run` starts them.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import redis
import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.support.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fresh_database_url(suffix: str) -> str:
    """A new, empty database next to DATABASE_URL's (or a new SQLite file)."""
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith("postgres"):
        import psycopg
        from psycopg import sql

        parts = urlsplit(url)
        name = (parts.path.lstrip("/") or "mangagen") + f"_{suffix}"
        admin = urlunsplit(parts._replace(path="/postgres"))
        with psycopg.connect(admin, autocommit=True) as conn:
            drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
            conn.execute(drop.format(sql.Identifier(name)))
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return urlunsplit(parts._replace(path=f"/{name}"))
    path = ROOT / "var" / f"{suffix}.sqlite3"
    path.parent.mkdir(exist_ok=True)
    for leftover in path.parent.glob(f"{suffix}.sqlite3*"):
        leftover.unlink()
    return f"sqlite:///{path}"


def stop(process: subprocess.Popen | None) -> None:
    """Stops a process started in a session of its own, with everything it started."""
    if process is None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def redis_url(db: int) -> str:
    """Database `db` of REDIS_URL's server (the benchmarks name theirs; a test takes
    `own_redis_url`)."""
    url = os.environ.get("REDIS_URL")
    if not url:
        raise RuntimeError("REDIS_URL is not set (make test / bin/with-redis set it)")
    return urlunsplit(urlsplit(url)._replace(path=f"/{db}"))


# Databases 1–15 of REDIS_URL's server, each leased to one live stack at a time (the
# tests' own database, REDIS_URL's, never): a whole run starts more stacks than there are
# databases, but only a few at once.
_leased: dict[int, str] = {}


def own_redis_url() -> str:
    """A Redis database of REDIS_URL's server that no other live stack of this run has,
    emptied for it: one stack's broker, channel layer and GPU pool see nothing of
    another's. A Stack gives it back when it stops (`release_redis_url`)."""
    redis_url(0)  # REDIS_URL is set
    own = int(urlsplit(os.environ["REDIS_URL"]).path.strip("/") or 0)
    for db in range(1, 16):
        if db == own or db in _leased:
            continue
        url = redis_url(db)
        redis.Redis.from_url(url).flushdb()  # what a stack before it left there
        _leased[db] = url
        return url
    raise RuntimeError("more stacks alive at once than Redis has databases")


def release_redis_url(url: str) -> None:
    """Gives back a database `own_redis_url` leased (any other URL is left alone)."""
    for db, leased in list(_leased.items()):
        if leased == url:
            del _leased[db]


# The Procfile's Celery workers (`-n render@%h`, `-n speculative@%h`).
WORKERS = ("render", "speculative")


class Stack:
    """A running stack; use as a context manager."""

    what = "the stack"

    def __init__(self, *, env: dict[str, str], log: Path):
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        # The Procfile names bare executables (daphne): this interpreter's come first.
        bin_dir = str(Path(sys.executable).parent)
        self.env = {
            **os.environ,
            "DEBUG": "on",
            # Every person a test or a bench signs up comes from 127.0.0.1.
            "SIGNUP_PER_ADDRESS_PER_HOUR": "100000",
            "PORT": str(self.port),
            "HOST": "127.0.0.1",
            "PYTHONUNBUFFERED": "1",
            "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")]),
            **env,
        }
        self.log = log
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Stack:
        beat = self.env.get("BEAT_SCHEDULE_FILE")
        if beat:
            Path(beat).unlink(missing_ok=True)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                self.command(),
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            self._wait_until_up()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        stop(self.process)
        release_redis_url(self.env.get("REDIS_URL", ""))

    def command(self) -> list[str]:
        return [sys.executable, "manage.py", "runstack", "--no-demo", "--port", str(self.port)]

    def ready(self) -> bool:
        """Beyond answering HTTP: both Celery workers said they are ready (a test that
        starts on a half-started stack races the other worker's start on a slow machine)."""
        # "render@host ready." in a plain line, or as a JSON line's message (LOG_FORMAT=json).
        said = re.findall(r"\b(\w+)@\S+ ready\.", self.log.read_text())
        return set(WORKERS) <= set(said)

    def _wait_until_up(self, timeout: float = 90) -> None:
        wait_for(
            self._up,
            timeout=timeout,
            every=0.2,
            what=lambda: f"{self.what} to come up:\n{self.log.read_text()[-4000:]}",
        )

    def _up(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise RuntimeError(f"{self.what} exited early:\n{self.log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(self.base_url + "/accounts/login/", timeout=2) as r:
                return r.status == 200 and self.ready()
        except OSError:
            return False

    def manage(self, *args: str) -> str:
        """Runs a management command against the stack's database."""
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
        return done.stdout

    def shell(self, code: str) -> str:
        return self.manage("shell", "--verbosity", "0", "-c", code)


class WebServer(Stack):
    """The web process alone (`bin/web`: daphne, as the Procfile's `web` runs it) on a
    database that `manage.py migrate` has prepared (migrated_database_url).

    For what only the real server shows (websocket close frames, request bodies as
    daphne passes them): no Celery worker runs, so renders stay queued.
    """

    what = "the web process"

    def command(self) -> list[str]:
        return [sys.executable, "bin/web"]

    def ready(self) -> bool:
        return True


def stack(name: str, *, log: Path | None = None, **env: str) -> Stack:
    """A Stack of its own (not started: use it as a context manager), the one way a test
    starts the whole stack: a fresh database and a Redis database no other stack of this
    run has (`own_redis_url`, unless `env` names a REDIS_URL of the test's own: a Redis
    it starts and stops), a GPU pool, media folder and beat schedule named for it, its
    log at var/`name`.log unless `log`; then the caller's `env`."""
    var = ROOT / "var"
    return Stack(
        env={
            "DATABASE_URL": fresh_database_url(name.replace("-", "_")),
            "REDIS_URL": env.get("REDIS_URL") or own_redis_url(),
            "GPU_POOL_PREFIX": name,
            "MEDIA_ROOT": str(var / f"{name}-media"),
            "BEAT_SCHEDULE_FILE": str(var / f"{name}-celerybeat-schedule"),
            **env,
        },
        log=log or var / f"{name}.log",
    )


def counted(stack: Stack, name: str, **labels: str) -> float:
    """A sample of the stack's /metrics (summed over its processes; read with its
    METRICS_TOKEN), 0 when absent."""
    answer = requests.get(
        f"{stack.base_url}/metrics",
        headers={"Authorization": f"Bearer {stack.env['METRICS_TOKEN']}"},
        timeout=10,
    )
    answer.raise_for_status()
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return sample.value
    return 0.0


def migrated_database_url(suffix: str, env: dict[str, str] | None = None) -> str:
    """A fresh database (fresh_database_url) with every migration applied."""
    url = fresh_database_url(suffix)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--verbosity", "0"],
        cwd=ROOT,
        env={**os.environ, "DEBUG": "on", **(env or {}), "DATABASE_URL": url},
        check=True,
        timeout=600,
    )
    return url
