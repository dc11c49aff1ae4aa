"""`POST /csp-report/`: what a browser's Content-Security-Policy blocked, logged.

The policy (settings/security.py) names this address in its `report-uri`; a browser
posts one JSON report per thing it refused to load or run. Each is logged as a
warning (`mangagen.csp`), so a page that breaks under the policy shows in the logs
instead of only in someone's browser console. Anyone can post here, so what is
logged is bounded: the report's first 8 KB, a few fields of it, and at most
REPORTS_PER_MINUTE lines a minute per process (the rest counted, then said).
"""

from __future__ import annotations

import json
import logging
import threading
import time

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

logger = logging.getLogger("mangagen.csp")

REPORT_BYTES = 8 * 1024
REPORTS_PER_MINUTE = 30
FIELD_CHARS = 300

_lock = threading.Lock()
_window = {"start": 0.0, "logged": 0, "dropped": 0}


def _may_log() -> tuple[bool, int]:
    """Whether this report may be logged now, and how many were dropped before it."""
    with _lock:
        now = time.monotonic()
        if now - _window["start"] >= 60:
            dropped = _window["dropped"]
            _window.update(start=now, logged=0, dropped=0)
        else:
            dropped = 0
        if _window["logged"] >= REPORTS_PER_MINUTE:
            _window["dropped"] += 1
            return False, 0
        _window["logged"] += 1
        return True, dropped


def _fields(body: bytes) -> dict[str, str]:
    """The report's directive, blocked resource and page, from either report format
    (`report-uri`'s {"csp-report": {...}} or the Reporting API's list of {"body": {...}})."""
    try:
        data = json.loads(body)
    except ValueError:
        return {"report": body[:FIELD_CHARS].decode(errors="replace")}
    if isinstance(data, list) and data and isinstance(data[0], dict):
        data = data[0].get("body", {})
    elif isinstance(data, dict):
        data = data.get("csp-report", data)
    if not isinstance(data, dict):
        return {"report": str(data)[:FIELD_CHARS]}
    names = {
        "directive": ("effective-directive", "effectiveDirective", "violated-directive"),
        "blocked": ("blocked-uri", "blockedURL"),
        "page": ("document-uri", "documentURL"),
        "source": ("source-file", "sourceFile"),
        "line": ("line-number", "lineNumber"),
    }
    found = {}
    for field, keys in names.items():
        value = next((data[k] for k in keys if k in data), "")
        found[field] = str(value)[:FIELD_CHARS]
    return found


@csrf_exempt
@require_POST
def csp_report(request: HttpRequest) -> HttpResponse:
    """204 always: a browser does nothing with the answer."""
    body = request.read(REPORT_BYTES)
    may, dropped = _may_log()
    if dropped:
        logger.warning("Content-Security-Policy: %d more reports were not logged", dropped)
    if may:
        fields = _fields(body)
        logger.warning(
            "Content-Security-Policy violation: %s",
            " ".join(f"{k}={v!r}" for k, v in fields.items() if v),
            extra={"csp": fields},
        )
    return HttpResponse(status=204)
