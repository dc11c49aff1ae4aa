"""Making a race happen every time: another connection acts between a read and its lock."""

import threading
from contextlib import contextmanager

from django.db import connection, connections


@contextmanager
def meanwhile(action, *, table="mangagen_job"):
    """Runs `action` on its own connection, to completion, just before this
    connection's first row lock on `table` (FOR UPDATE or FOR NO KEY UPDATE).
    Yields a list that holds what it returned (or raised) once it ran."""
    done: list = []

    def run():
        try:
            done.append(action())
        except Exception as exc:
            done.append(exc)
        finally:
            connections.close_all()

    def wrapper(execute, sql, params, many, context):
        locks = "FOR UPDATE" in sql or "FOR NO KEY UPDATE" in sql
        if not done and locks and f'FROM "{table}"' in sql:
            thread = threading.Thread(target=run)
            thread.start()
            thread.join(timeout=60)
            assert done, "the other connection did not finish"
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        yield done
