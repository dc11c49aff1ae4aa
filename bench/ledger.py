"""Ledger throughput on PostgreSQL: authorize+capture pairs per second.

Runs the ledger's services at concurrency 1, 8 and 32, on one hot account and
spread over 100 accounts — the fast path (one stored-function call per
operation) and the plain ORM path — and beside each a raw-SQL loop doing the
same balance arithmetic with bare conditional UPDATEs on the same database:
the price of the journal, the idempotency keys and the hold rows, measured
side by side. Beside those, the same services with their observability off
(`quiet`: the functions under `@counted`, no count and no log line), and the
ledger's own two statements from bare psycopg with no Django and no services
around them (`bare`: the ceiling of its SQL on this machine), all four in
turn: `ledger/quiet` is what being counted and logged costs, `bare/raw` what
the ledger's SQL costs against the raw loop's.

Counters are file-backed, as a server keeps them (PROMETHEUS_MULTIPROC_DIR, a
temporary folder unless set). The ledger logs at INFO, as in production,
through production's own handlers, filters and formatter (LOGGING): only the
stream of the handlers that write to the terminal is turned to a file in a
temporary folder (deleted at exit; its line count is printed at the end), so
every line is still made and written, and the terminal shows only the table.

Statements and round trips per pair are counted on the wire (libpq's trace)
for each. How the ledger scales from 1 to 8 threads is measured the same way
(both back to back, round after round), and so is its bare SQL. Not a test;
run it with

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/mangagen_bench python bench/ledger.py

(the database is created if missing and its ledger tables are reset).
"""

from __future__ import annotations

import argparse
import atexit
import itertools
import os
import shutil
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/mangagen_bench")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangagen.settings")
# DEBUG stays off (it would record every query); a bench serves no one.
os.environ.setdefault("SECRET_KEY", "bench-ledger-not-a-server")
os.environ.setdefault("ALLOWED_HOSTS", "localhost")
# Each thread owns its connection, as the raw loop's do (a pool smaller than
# the thread count would make threads wait for one, not for the ledger).
os.environ.setdefault("DB_POOL_MAX_SIZE", "0")

# Counters kept as a server keeps them (runstack): file-backed, in every
# process's own files, summed at scrape time. Set before prometheus_client is
# imported, which reads it once.
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    _metrics_dir = tempfile.mkdtemp(prefix="bench-ledger-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = _metrics_dir
    atexit.register(shutil.rmtree, _metrics_dir, ignore_errors=True)

SCALING_ROUNDS = 5
TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def process_cpu() -> float:
    """This process's CPU seconds so far, user and system, every thread."""
    times = os.times()
    return times.user + times.system


def cpu_ticks(pid: int) -> int | None:
    """A local process's CPU so far (user + system, clock ticks), or None where
    /proc does not show it (PostgreSQL on another machine)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])


def log_to_a_file() -> Path:
    """Turns the stream of every handler that writes to the terminal to one file in a
    temporary folder (deleted at exit), keeping the handlers, their level, filters and
    formatter: the lines cost what they cost in production, without being printed."""
    import logging

    folder = tempfile.mkdtemp(prefix="bench-ledger-log-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = Path(folder) / "bench.log"
    stream = path.open("a", encoding="utf-8")
    atexit.register(stream.close)
    loggers = [logging.getLogger()] + [
        logger
        for logger in logging.root.manager.loggerDict.values()
        if isinstance(logger, logging.Logger)
    ]
    for logger in loggers:
        for handler in logger.handlers:
            if isinstance(handler, logging.StreamHandler) and handler.stream in (
                sys.stderr,
                sys.stdout,
            ):
                handler.setStream(stream)
    return path


def ensure_database(url: str) -> None:
    import psycopg
    from psycopg import sql

    name = url.rsplit("/", 1)[1].split("?")[0]
    admin_url = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def on_the_wire(pgconn, work, pairs: int) -> tuple[float, float]:
    """(statements, round trips) per pair of `work`, read from libpq's own trace."""
    from psycopg import pq

    with tempfile.TemporaryFile() as trace:
        pgconn.trace(trace.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        for _ in range(pairs):
            work()
        pgconn.untrace()
        trace.seek(0)
        lines = trace.read().decode(errors="replace").splitlines()
    round_trips = sum(line.startswith("B") and "ReadyForQuery" in line for line in lines)
    bookkeeping = ('"BEGIN"', '"COMMIT"', '"ROLLBACK"', '"SAVEPOINT', '"RELEASE')
    statements = sum(
        line.startswith("B")
        and "CommandComplete" in line
        and not any(b in line for b in bookkeeping)
        for line in lines
    )
    return statements / pairs, round_trips / pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per measurement")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="alternating ledger/raw measurements per cell; the medians are printed",
    )
    parser.add_argument(
        "--no-plain", action="store_true", help="skip the plain (ORM) path's column"
    )
    args = parser.parse_args()

    url = os.environ["DATABASE_URL"]
    if not url.startswith("postgres"):
        sys.exit("bench/ledger.py measures PostgreSQL: set DATABASE_URL=postgres://…")
    ensure_database(url)

    import django

    django.setup()
    log_path = log_to_a_file()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import DEFAULT_DB_ALIAS, connection, connections
    from django.test import override_settings

    from ledger import fast_path, services
    from ledger.models import SYSTEM_SHARDS

    call_command("migrate", verbosity=0)
    with connection.cursor() as cur:
        cur.execute(
            "TRUNCATE ledger_hold, ledger_transfer, ledger_balanceshard RESTART IDENTITY CASCADE;"
            "UPDATE ledger_account SET available = 0, held = 0;"
            "DROP TABLE IF EXISTS bench_raw_account;"
            "CREATE TABLE bench_raw_account (id int PRIMARY KEY, available bigint NOT NULL"
            " CHECK (available >= 0), held bigint NOT NULL CHECK (held >= 0));"
            "INSERT INTO bench_raw_account SELECT g, 1000000000, 0 FROM generate_series(1, 100) g;"
        )
    User = get_user_model()
    accounts = []
    for i in range(100):
        user, _ = User.objects.get_or_create(username=f"bench-{i}")
        account = services.account_for(user)
        services.grant(account=account, amount=10**9, key=f"bench-seed-{i}", reason="bench")
        account.refresh_from_db()
        accounts.append(account)
    raw_dsn = url

    counter = itertools.count()

    def ledger_pair(account_index: int) -> None:
        n = next(counter)
        hold = services.authorize(
            account=accounts[account_index], amount=1, key=f"b{n}", reference="bench"
        )
        services.capture(hold=hold)

    # The same services with their observability off: the functions under
    # `@counted` (no count, no log line), to show what being observed costs.
    authorize_unobserved = services.authorize.__wrapped__  # type: ignore[attr-defined]
    capture_unobserved = services.capture.__wrapped__  # type: ignore[attr-defined]

    def unobserved_pair(account_index: int) -> None:
        n = next(counter)
        hold = authorize_unobserved(
            account=accounts[account_index], amount=1, key=f"u{n}", reference="bench"
        )
        capture_unobserved(hold=hold)

    # The plain path is measured under this override, entered once in the main
    # thread (override_settings is process-wide, never per thread).
    plain_path = override_settings(LEDGER_FAST_PATH=False)

    # CPU per pair of the last `measure`: this process's (every thread's, the
    # ledger's flushing thread included) and its database backends' (read from
    # /proc: None unless PostgreSQL runs on this machine), in microseconds.
    last_cpu: dict[str, float | None] = {}

    def measure(work, concurrency: int, spread: int, setup=None, teardown=None) -> float:
        done = [0] * concurrency
        backend_ticks: list[int | None] = [None] * concurrency
        clock: dict[str, float] = {}

        def start_clock() -> None:  # run once, when every thread is ready
            clock["cpu"] = process_cpu()
            clock["started"] = time.perf_counter()
            clock["stop"] = clock["started"] + args.seconds

        barrier = threading.Barrier(concurrency, action=start_clock)

        def worker(w: int) -> None:
            # Each thread's connection is opened and its statements prepared
            # (one call of `work`) before the clock starts, for every column
            # alike: a server keeps its connections (CONN_MAX_AGE).
            try:
                state = setup() if setup else None
                work(w % spread, state) if setup else work(w % spread)
                pid = backend_pid(state)
                started = cpu_ticks(pid)
            except BaseException:
                barrier.abort()  # the other threads stop waiting, and fail
                raise
            barrier.wait()
            i = w
            try:
                while time.perf_counter() < clock["stop"]:
                    work(i % spread, state) if setup else work(i % spread)
                    done[w] += 1
                    i += concurrency
                ended = cpu_ticks(pid)
                if started is not None and ended is not None:
                    backend_ticks[w] = ended - started
            finally:
                if teardown:
                    teardown(state)
                connections.close_all()

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(concurrency)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - clock["started"]
        pairs = max(sum(done), 1)
        last_cpu["python"] = (process_cpu() - clock["cpu"]) / pairs * 1e6
        ticks = [t for t in backend_ticks if t is not None]
        last_cpu["postgres"] = (
            sum(ticks) / TICKS_PER_SECOND / pairs * 1e6 if len(ticks) == concurrency else None
        )
        return sum(done) / elapsed

    def backend_pid(state) -> int:
        """The PostgreSQL backend serving this thread: Django's connection, or the
        bare loops' own (a psycopg connection, or a cursor on one)."""
        if state is None:
            # A thread whose operations another thread's batch ran may not have
            # opened its own yet.
            db = connections[DEFAULT_DB_ALIAS]
            db.ensure_connection()
            return db.connection.info.backend_pid
        return getattr(state, "connection", state).info.backend_pid

    def raw_setup():
        import psycopg

        return psycopg.connect(raw_dsn, autocommit=False)

    def raw_pair(account_index: int, conn) -> None:
        pk = account_index + 1
        with conn.transaction():
            conn.execute(
                "UPDATE bench_raw_account SET available = available - 1, held = held + 1"
                " WHERE id = %s AND available >= 1",
                [pk],
            )
        with conn.transaction():
            conn.execute("UPDATE bench_raw_account SET held = held - 1 WHERE id = %s", [pk])

    def stored_setup():
        import psycopg
        from psycopg.types.numeric import Int8BinaryDumper

        conn = psycopg.connect(raw_dsn, autocommit=True, prepare_threshold=2**31 - 1)
        cursor = conn.cursor()
        cursor.adapters.register_dumper(int, Int8BinaryDumper)  # as the fast path does
        return cursor

    def stored_pair(account_index: int, cursor) -> None:
        n = next(counter)
        now = datetime.now(UTC)
        authorize = [accounts[account_index].pk, 1, f"s{n}", "bench", now, now + timedelta(hours=2)]
        cursor.execute(fast_path.AUTHORIZE_SQL, authorize, prepare=True, binary=True)
        hold_id = cursor.fetchone()[6]  # the hold's columns follow the six of the answer
        capture = [hold_id, "post", "captured", None, f"hold:{hold_id}:resolve", False, ""]
        capture += [None, now, SYSTEM_SHARDS, False]
        cursor.execute(fast_path.RESOLVE_SQL, capture, prepare=True, binary=True)
        cursor.fetchone()

    connection.ensure_connection()
    raw_conn = raw_setup()
    ledger_conn = connection.connection.pgconn
    wire = {
        "ledger": on_the_wire(ledger_conn, lambda: ledger_pair(0), 50),
        "plain": plain_path(on_the_wire)(ledger_conn, lambda: ledger_pair(0), 50),
        "raw": on_the_wire(raw_conn.pgconn, lambda: raw_pair(0, raw_conn), 50),
    }
    raw_conn.close()
    connection.close()

    concurrencies = [int(c) for c in args.concurrency.split(",")]
    print(
        f"authorize+capture pairs per second, PostgreSQL: medians of {args.rounds} rounds"
        f" of {args.seconds:.0f} s; ledger (metrics and logs on), quiet (the same services"
        " with them off), raw SQL and bare (the ledger's two statements from bare psycopg)"
        " in turn"
    )
    print(
        "statements / round trips per pair: "
        + ", ".join(f"{name} {st:.0f} / {rt:.0f}" for name, (st, rt) in wire.items())
    )
    plain_header = "" if args.no_plain else f" {'plain/s':>8} {'plain/raw':>10}"
    print(
        f"{'accounts':>9} {'threads':>8} {'ledger/s':>9} {'quiet/s':>9} {'raw SQL/s':>10}"
        f" {'ledger/raw':>11} {'quiet/raw':>11} {'ledger/quiet':>12} {'bare/s':>8}"
        f" {'bare/raw':>9}{plain_header}"
    )

    def alternating(first, second, rounds: int) -> tuple[float, float, float, list[float]]:
        """(first's rate, second's, the ratio first/second, each round's ratio):
        medians over rounds of the two measured back to back, the order flipped
        each round, so that a slow moment of the machine (a checkpoint, a
        neighbour) weighs on both alike."""
        firsts, seconds, ratios = [], [], []
        for round_number in range(rounds):
            if round_number % 2:
                b = second()
                a = first()
            else:
                a = first()
                b = second()
            firsts.append(a)
            seconds.append(b)
            ratios.append(a / b)
        return median(firsts), median(seconds), median(ratios), ratios

    def side_by_side(concurrency: int, spread: int) -> tuple[list[float], list[float], str]:
        """([ledger/s, unobserved/s, raw/s, bare/s], [ledger/raw, unobserved/raw,
        ledger/unobserved, bare/raw], the CPU per pair of each): the four measured
        back to back each round, the order rotated each round, medians over rounds
        (of each round's ratios for the ratios)."""
        columns = [
            lambda: measure(ledger_pair, concurrency, spread),
            lambda: measure(unobserved_pair, concurrency, spread),
            lambda: measure(raw_pair, concurrency, spread, raw_setup, lambda c: c.close()),
            lambda: measure(
                stored_pair, concurrency, spread, stored_setup, lambda c: c.connection.close()
            ),
        ]
        rates: list[list[float]] = [[] for _ in columns]
        cpus: list[list[dict]] = [[] for _ in columns]
        for round_number in range(args.rounds):
            shift = round_number % len(columns)
            for index in [(shift + i) % len(columns) for i in range(len(columns))]:
                rates[index].append(columns[index]())
                cpus[index].append(dict(last_cpu))
        observed, unobserved, raw, bare = rates

        def cpu(samples: list[dict], side: str) -> str:
            values = [s[side] for s in samples if s[side] is not None]
            return f"{median(values):.0f}" if len(values) == len(samples) else "?"

        cpu_line = ", ".join(
            f"{name} {cpu(samples, 'python')} / {cpu(samples, 'postgres')}"
            for name, samples in zip(("ledger", "quiet", "raw", "bare"), cpus, strict=True)
        )

        def ratio(a: list[float], b: list[float]) -> float:
            return median(x / y for x, y in zip(a, b, strict=True))

        ratios = [
            ratio(observed, raw),
            ratio(unobserved, raw),
            ratio(observed, unobserved),
            ratio(bare, raw),
        ]
        return [median(r) for r in rates], ratios, cpu_line

    cpu_lines = []
    for spread, label in ((1, "1 (hot)"), (100, "100")):
        for concurrency in concurrencies:
            (
                (ledger_rate, quiet_rate, raw_rate, bare_rate),
                (ratio, quiet_ratio, cost, bare_ratio),
                cpu_line,
            ) = side_by_side(concurrency, spread)
            cpu_lines.append(f"{label:>9} {concurrency:>8}  {cpu_line}")
            line = (
                f"{label:>9} {concurrency:>8} {ledger_rate:>9.0f} {quiet_rate:>9.0f}"
                f" {raw_rate:>10.0f} {ratio:>10.2f}x {quiet_ratio:>10.2f}x {cost:>11.2f}x"
                f" {bare_rate:>8.0f} {bare_ratio:>8.2f}x"
            )
            if not args.no_plain:
                plain_rate = plain_path(measure)(ledger_pair, concurrency, spread)
                line += f" {plain_rate:>8.0f} {plain_rate / raw_rate:>9.2f}x"
            print(line, flush=True)
    print(
        "CPU per pair in microseconds, this process (every thread) / its PostgreSQL backends"
        " (from /proc; ? if not local), medians:"
    )
    for cpu_line in cpu_lines:
        print(cpu_line)
    if 1 in concurrencies and 8 in concurrencies:
        # Scaling is a ratio of two rates, so it is measured as the ledger/raw
        # ratio is: 1 and 8 threads back to back, the order flipped each
        # round, the median of the rounds' ratios. (The table's cells are
        # measured a minute apart, and this machine's speed drifts more than
        # that between them.)
        def scaling(work, setup=None, teardown=None) -> tuple[float, float, float, list[float]]:
            """(8 threads/s, 1 thread/s, median 8/1 ratio, each round's ratio)."""
            return alternating(
                lambda: measure(work, 8, 100, setup, teardown),
                lambda: measure(work, 1, 100, setup, teardown),
                SCALING_ROUNDS,
            )

        def round_range(ratios: list[float]) -> str:
            return f"rounds {min(ratios):.2f}-{max(ratios):.2f}x"

        eight, one, ratio, ratios = scaling(ledger_pair)
        print(
            f"scaling over 100 accounts, 1 and 8 threads side by side, {SCALING_ROUNDS} rounds:"
            f" {one:.0f}/s and {eight:.0f}/s, 8 / 1 thread {ratio:.2f}x"
            f" ({round_range(ratios)}; target >= 2x)"
        )
        # The ceiling of the ledger's SQL on this machine: the same two statements
        # from bare psycopg (no Django, no services), so what the Python around
        # them costs shows beside it.
        eight, one, ratio, ratios = scaling(
            stored_pair, stored_setup, lambda c: c.connection.close()
        )
        print(
            "the ledger's two statements from bare psycopg, the same way:"
            f" {one:.0f}/s and {eight:.0f}/s, 8 / 1 thread {ratio:.2f}x ({round_range(ratios)})"
        )

    from ledger.selectors import reconciliation

    problems = [m for m in reconciliation() if m.kind != "stale_hold"]
    print("reconciliation after the run:", "all reconciled" if not problems else problems[:5])
    with log_path.open(encoding="utf-8", errors="replace") as written:
        lines = sum(1 for _ in written)
    print(f"log lines written at INFO by the measured side (to a temporary file): {lines}")


if __name__ == "__main__":
    main()
