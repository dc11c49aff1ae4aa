"""Django's PostgreSQL backend, timing each wait for a connection.

With the pool on, a request or task that finds every connection of its
process taken waits (up to the pool's timeout): that wait is
`mangagen_db_connection_wait_seconds`, and a connection that could not be had
at all (the pool's timeout, the server away) counts in
`mangagen_db_connection_errors_total`. Without the pool, the wait is the
connect itself. Nothing else differs from Django's backend.
"""

from __future__ import annotations

import time

from django.db.backends.postgresql import base

from mangagen.observability import metrics


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        started = time.perf_counter()
        try:
            connection = super().get_new_connection(conn_params)
        except Exception:
            metrics.db_connection_errors.inc()
            raise
        metrics.db_connection_wait.observe(time.perf_counter() - started)
        return connection
