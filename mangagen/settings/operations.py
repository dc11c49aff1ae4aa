"""Operating it: logs, request ids, metrics."""

from ipaddress import ip_network

from django.core.exceptions import ImproperlyConfigured
from django_guid.integrations import CeleryIntegration

from mangagen.observability.logs import logging_config
from mangagen.settings.environment import env
from mangagen.settings.workers import CELERY_BEAT_SCHEDULE

# LOG_FORMAT=json: one JSON object per line (time, level, logger, message, request_id,
# job and panel where known); text otherwise. mangagen/observability/logs.py.
LOG_FORMAT = env.str("LOG_FORMAT", default="text")
if LOG_FORMAT not in ("text", "json"):
    raise ImproperlyConfigured("LOG_FORMAT must be text or json.")
# In text, the periodic tasks (CELERY_BEAT_SCHEDULE: sweeps, some every second) log a
# run only when it did something or failed; JSON keeps every line.
LOGGING = logging_config(
    level=env.str("LOG_LEVEL", default="INFO"),
    json=LOG_FORMAT == "json",
    housekeeping=[entry["task"] for entry in CELERY_BEAT_SCHEDULE.values()],
)
DJANGO_GUID = {
    # A proxy's id (a UUID) is kept; anything else is replaced by a new one.
    "GUID_HEADER_NAME": "X-Request-ID",
    "VALIDATE_GUID": True,
    "INTEGRATIONS": [CeleryIntegration()],
}
# /metrics answers `Authorization: Bearer <METRICS_TOKEN>` (and staff); empty: staff only.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
PROMETHEUS_LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, float("inf"))
# Prometheus may scrape over plain HTTP inside the network: with the HTTPS redirect on,
# /metrics is exempt from it for callers in METRICS_PLAIN_HTTP_NETWORKS (loopback and
# the private ranges by default; empty: HTTPS only) and answers any other caller over
# plain HTTP 403, before reading its token (observability/exposition.py).
SECURE_REDIRECT_EXEMPT = [r"^metrics$"]
METRICS_PLAIN_HTTP_NETWORKS = env.list(
    "METRICS_PLAIN_HTTP_NETWORKS",
    default=[
        "127.0.0.0/8",
        "::1/128",
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "fc00::/7",
    ],
)
try:
    _networks = [ip_network(n.strip(), strict=False) for n in METRICS_PLAIN_HTTP_NETWORKS]
except ValueError as refused:
    raise ImproperlyConfigured(f"METRICS_PLAIN_HTTP_NETWORKS: {refused}") from refused
