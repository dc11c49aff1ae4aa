"""`/healthz` (the process serves) and `/readyz` (it can do its work), for an orchestrator.

Both are cheap, need no session and are never throttled: a load balancer or
Kubernetes asks every few seconds. `/readyz` asks the database (`SELECT 1`),
Redis (`PING`, one second at most, no retries) and whether every migration
this code knows is applied; it answers 503 `{"failed": [...]}` naming what
is not ready, so traffic goes elsewhere while it is not. Applied migrations
are remembered once seen (this process's code cannot need more later); until
then each ask reads the migration table. Without DEBUG it also asks whether this
process found the collected static files when it started (`static`: `bin/release`
collects them; a process started before that serves no CSS or JS until restarted).

`bin/release` does what both need; each process also says at start, in its log,
what of it is missing (`log_unreleased`).
"""

from __future__ import annotations

import logging
from enum import StrEnum

import redis
from django.conf import settings
from django.contrib.staticfiles.storage import staticfiles_storage
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, JsonResponse

from mangagen.kernel import static_storage
from mangagen.kernel.broker import quick_client

logger = logging.getLogger(__name__)


class Check(StrEnum):
    """What /readyz asks, in order; a failed one is named in `failed`."""

    DATABASE = "database"
    REDIS = "redis"
    MIGRATIONS = "migrations"
    STATIC = "static"


_migrations_applied = False


def database_answers() -> bool:
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except DatabaseError as exc:
        logger.warning("Readiness: the database did not answer (%s)", exc)
        return False


def redis_answers() -> bool:
    try:
        return bool(quick_client(settings.REDIS_URL).ping())
    except redis.RedisError as exc:
        logger.warning("Readiness: Redis did not answer (%s)", exc)
        return False


def migrations_applied() -> bool:
    """Whether the database has every migration this code has (remembered once true)."""
    global _migrations_applied
    if not _migrations_applied:
        try:
            executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
            targets = executor.loader.graph.leaf_nodes()
            _migrations_applied = not executor.migration_plan(targets)
        except DatabaseError as exc:
            logger.warning("Readiness: could not read the migrations (%s)", exc)
            return False
    return _migrations_applied


def failed_checks() -> list[Check]:
    failed = []
    database = database_answers()
    if not database:
        failed.append(Check.DATABASE)
    if not redis_answers():
        failed.append(Check.REDIS)
    if not database or not migrations_applied():
        failed.append(Check.MIGRATIONS)
    if not static_collected():
        failed.append(Check.STATIC)
    return failed


def static_collected() -> bool:
    """Whether this process can name and serve the collected static files (always, with
    DEBUG: they are served from static/ as they are)."""
    return static_storage.collected(staticfiles_storage)


def log_unreleased(process: str, *, serves_static: bool) -> list[Check]:
    """Logs, once at a process's start, an error naming what `bin/release` has not done
    yet (migrations, static files); returns it (empty: nothing missing)."""
    missing = []
    if not database_answers():
        return missing  # already said (database_answers logs it); nothing more to know
    if not migrations_applied():
        missing.append(Check.MIGRATIONS)
    if serves_static and not static_collected():
        missing.append(Check.STATIC)
    if missing:
        what = {
            Check.MIGRATIONS: "the database lacks migrations this code needs",
            Check.STATIC: f"no collected static files in {settings.STATIC_ROOT} (no CSS, no JS)",
        }
        logger.error(
            "%s started before the release step: %s. Run bin/release (docs/deploy.md), "
            "then restart this process; /readyz answers 503 until then.",
            process,
            "; ".join(what[check] for check in missing),
        )
    return missing


def healthz(request: HttpRequest) -> JsonResponse:
    """200 while this process serves requests."""
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> JsonResponse:
    """200 when the database and Redis answer and migrations are applied; 503 naming what
    failed otherwise."""
    failed = failed_checks()
    if failed:
        return JsonResponse({"failed": [str(check) for check in failed]}, status=503)
    return JsonResponse({"status": "ok"})
