"""The database and Redis (the Celery broker, the channel layer and the cache).

With no `DATABASE_URL` the app runs on a SQLite file (WAL, immediate transactions) so
that daphne and the Celery workers can share it; with no `REDIS_URL` it expects the
embedded Redis that `bin/with-redis` starts."""

from mangagen.settings.environment import BASE_DIR, env

DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets readers run beside one writer; IMMEDIATE takes the write lock
    # at BEGIN, so two processes never deadlock upgrading a read lock;
    # synchronous=FULL syncs the WAL at every commit, so a committed grant
    # survives a power cut (NORMAL may lose the last commits).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;",
        }
    )
else:
    # A pool of connections per process (psycopg_pool): daphne runs each request
    # in a thread of its own, so a per-thread persistent connection (CONN_MAX_AGE)
    # would never be reused, and without a pool every request and task opened a
    # connection of its own (a new PostgreSQL backend each time). The pool's
    # connections keep the ledger's prepared statements, too. DB_POOL_MAX_SIZE=0
    # turns it off (then CONN_MAX_AGE applies), e.g. behind PgBouncer. The
    # default matches the workers' thread count (RENDER_CONCURRENCY).
    DB_POOL_MAX_SIZE = env.int("DB_POOL_MAX_SIZE", default=32)
    # Every connection is checked before it is handed out (the pool's check_connection,
    # or Django's own check of a persistent one): after a failover or
    # pg_terminate_backend, a dead connection is replaced instead of failing a request.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # Times each wait for a connection (mangagen_db_connection_wait_seconds).
    DATABASES["default"]["ENGINE"] = "mangagen.observability.postgresql"
    if DB_POOL_MAX_SIZE:
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": 1,
            "max_size": DB_POOL_MAX_SIZE,
            "timeout": 30,  # seconds a request waits for a free connection
        }
    else:
        DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=0))
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis: broker, channel layer, cache ------------------------------------
REDIS_URL = env.str("REDIS_URL", default="redis://127.0.0.1:6379/0")

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
    }
}
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": [REDIS_URL]},
    }
}
