"""Log lines an operator can follow: a request id on each, and the job and panel.

`LOG_FORMAT=json` writes one JSON object per line (`time`, `level`,
`logger`, `message`, `request_id`, and `job`/`panel` where known, plus any
`extra` a call passes); `text` (the default) writes the same fields as one
readable line. The request id is django-guid's: taken from an incoming
`X-Request-ID` (a UUID) or made, returned in the response, and carried in the
headers of every Celery task the request sends (so a render's lines, and the
ledger's capture, carry the id of the click that asked for it). A task sets
the job and panel it works on with `about(job=…, panel=…)`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from contextvars import ContextVar

from django_guid import get_guid

_about: ContextVar[dict[str, int] | None] = ContextVar("log_about", default=None)

JSON_FIELDS = {
    "levelname": "level",
    "name": "logger",
    "request_id": "request_id",
}


@contextlib.contextmanager
def about(**fields: int) -> Iterator[None]:
    """Log lines written inside name these (e.g. `job=12, panel=1`)."""
    token = _about.set({**(_about.get() or {}), **fields})
    try:
        yield
    finally:
        _about.reset(token)


class ContextFilter(logging.Filter):
    """Puts the request id (or "-") and the job/panel being worked on into each record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = get_guid() or "-"
        for name, value in (_about.get() or {}).items():
            if not hasattr(record, name):
                setattr(record, name, value)
        return True


def logging_config(*, level: str, json: bool) -> dict:
    """The LOGGING setting: everything to stderr through one handler, as text or JSON."""
    formatter = (
        {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(levelname)s %(name)s %(message)s %(request_id)s",
            "rename_fields": JSON_FIELDS,
            "timestamp": "time",  # ISO 8601, UTC, microseconds
        }
        if json
        else {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"}
    )
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": "mangagen.observability.logs.ContextFilter"}},
        "formatters": {"default": formatter},
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "filters": ["context"],
                "formatter": "default",
            }
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            # One line per request and task about the id itself: noise at INFO.
            "django_guid": {"level": "WARNING"},
        },
    }
