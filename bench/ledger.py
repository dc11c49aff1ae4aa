"""Ledger throughput on PostgreSQL: authorize+capture pairs per second.

Runs the ledger's services at concurrency 1, 8 and 32, on one hot account and
spread over 100 accounts, and beside each a raw-SQL loop doing the same
balance arithmetic with bare conditional UPDATEs on the same database: the
price of the journal, the idempotency keys and the hold rows, measured side
by side. Not a test; run it with

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/mangagen_bench python bench/ledger.py

(the database is created if missing and its ledger tables are reset).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/mangagen_bench")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangagen.settings")


def ensure_database(url: str) -> None:
    import psycopg
    from psycopg import sql

    name = url.rsplit("/", 1)[1].split("?")[0]
    admin_url = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per measurement")
    parser.add_argument("--concurrency", default="1,8,32")
    args = parser.parse_args()

    url = os.environ["DATABASE_URL"]
    if not url.startswith("postgres"):
        sys.exit("bench/ledger.py measures PostgreSQL: set DATABASE_URL=postgres://…")
    ensure_database(url)

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection, connections

    from ledger import services

    call_command("migrate", verbosity=0)
    with connection.cursor() as cur:
        cur.execute(
            "TRUNCATE ledger_hold, ledger_transfer RESTART IDENTITY CASCADE;"
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

    def measure(work, concurrency: int, spread: int, setup=None, teardown=None) -> float:
        done = [0] * concurrency
        stop = time.perf_counter() + args.seconds
        barrier = threading.Barrier(concurrency)

        def worker(w: int) -> None:
            state = setup() if setup else None
            barrier.wait()
            i = w
            try:
                while time.perf_counter() < stop:
                    work(i % spread, state) if setup else work(i % spread)
                    done[w] += 1
                    i += concurrency
            finally:
                if teardown:
                    teardown(state)
                connections.close_all()

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(concurrency)]
        started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return sum(done) / (time.perf_counter() - started)

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

    concurrencies = [int(c) for c in args.concurrency.split(",")]
    print(f"authorize+capture pairs per second, {args.seconds:.0f} s each, PostgreSQL")
    print(f"{'accounts':>9} {'threads':>8} {'ledger/s':>10} {'raw SQL/s':>10} {'ledger/raw':>11}")
    for spread, label in ((1, "1 (hot)"), (100, "100")):
        for concurrency in concurrencies:
            ledger_rate = measure(ledger_pair, concurrency, spread)
            raw_rate = measure(raw_pair, concurrency, spread, raw_setup, lambda c: c.close())
            print(
                f"{label:>9} {concurrency:>8} {ledger_rate:>10.0f} {raw_rate:>10.0f}"
                f" {ledger_rate / raw_rate:>10.2f}x"
            )

    from ledger.selectors import reconciliation

    problems = [m for m in reconciliation() if m.kind != "stale_hold"]
    print("reconciliation after the run:", "all reconciled" if not problems else problems[:5])


if __name__ == "__main__":
    main()
