"""Log lines an operator can follow: a request id on each, and the job and panel.

`LOG_FORMAT=json` writes one JSON object per line (`time`, `level`,
`logger`, `message`, `request_id`, and `job`/`panel` where known, plus any
`extra` a call passes, and `client`, the caller's address as the throttles count it
(mangagen/kernel/client_address.py), on a request's lines); `text` (the default)
writes the same fields as one readable line. The request id is django-guid's: taken from an incoming
`X-Request-ID` (a UUID) or made, returned in the response, and carried in the
headers of every Celery task the request sends (so a render's lines, and the
ledger's capture, carry the id of the click that asked for it). A task sets
the job and panel it works on with `about(job=…, panel=…)`.

A terminal a person reads (`text`) hears from housekeeping — the periodic
tasks of `CELERY_BEAT_SCHEDULE`, some of them every second — only when a run
did something or failed: beat sending one, a worker receiving one, and a
run whose answer is nothing (0, None, all zeros) are left out by
`QuietHousekeeping`; a run that found work, any warning or error, and every
request, render and hold line stay. JSON logs (`LOG_FORMAT=json`) are for
machines and keep every line.
"""

from __future__ import annotations

import ast
import contextlib
import logging
from collections.abc import Iterable, Iterator
from contextvars import ContextVar

from celery.app.trace import LOG_RECEIVED, LOG_SUCCESS
from django.http import HttpRequest
from django_guid import get_guid

from mangagen.kernel.client_address import client_address

_about: ContextVar[dict[str, int] | None] = ContextVar("log_about", default=None)
_client: ContextVar[str | None] = ContextVar("log_client", default=None)

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


@contextlib.contextmanager
def from_client(address: str) -> Iterator[None]:
    """Log lines written inside carry `client`: the request's client address."""
    token = _client.set(address)
    try:
        yield
    finally:
        _client.reset(token)


class ContextFilter(logging.Filter):
    """Puts the request id (or "-"), the client's address and the job/panel being worked
    on into each record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = get_guid() or "-"
        client = _client.get()
        asked = getattr(record, "request", None)  # django.request's lines, once answered
        if client is None and isinstance(asked, HttpRequest):
            client = client_address(asked)
        if client is not None and not hasattr(record, "client"):
            record.client = client
        for name, value in (_about.get() or {}).items():
            if not hasattr(record, name):
                setattr(record, name, value)
        return True


# What celery.beat says when it sends a periodic task (args: the entry's name, the task).
BEAT_SENDS = "Scheduler: Sending due task %s (%s)"


def did_nothing(answer: str) -> bool:
    """Whether a task's answer, as Celery logs it (its repr), says it found nothing
    to do: 0, None, False, an empty collection, or a dict of those."""
    try:
        value = ast.literal_eval(answer)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False  # not a plain value: say it
    if isinstance(value, dict):
        return not any(value.values())
    return not value


class QuietHousekeeping(logging.Filter):
    """Leaves out what housekeeping `tasks` say at INFO when a run did nothing: beat
    sending one, a worker receiving one, its success with a nothing answer."""

    def __init__(self, tasks: Iterable[str] = ()):
        super().__init__()
        self.tasks = frozenset(tasks)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO:
            return True
        if record.msg == BEAT_SENDS and isinstance(record.args, tuple):
            return record.args[-1] not in self.tasks
        data = getattr(record, "data", None)
        if not isinstance(data, dict) or data.get("name") not in self.tasks:
            return True
        if record.msg == LOG_RECEIVED:
            return False
        if record.msg == LOG_SUCCESS:
            return not did_nothing(str(data.get("return_value")))
        return True


def logging_config(*, level: str, json: bool, housekeeping: Iterable[str] = ()) -> dict:
    """The LOGGING setting: everything to stderr through one handler, as text or JSON;
    in text, the `housekeeping` tasks' runs that did nothing are left out."""
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
    filters: dict[str, dict] = {"context": {"()": "mangagen.observability.logs.ContextFilter"}}
    if not json:
        filters["housekeeping"] = {
            "()": "mangagen.observability.logs.QuietHousekeeping",
            "tasks": sorted(housekeeping),
        }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": filters,
        "formatters": {"default": formatter},
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "filters": list(filters),
                "formatter": "default",
            }
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            # One line per request and task about the id itself: noise at INFO.
            "django_guid": {"level": "WARNING"},
        },
    }
