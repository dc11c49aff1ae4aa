"""`GET /metrics`: every process's counters and histograms, and the shared gauges.

With `PROMETHEUS_MULTIPROC_DIR` set (runstack sets it; see docs/operating.md,
"Probes, metrics and logs"), every process of the machine writes its counters and
histograms to files there and this sums them, so any web process answers for
all of them: daphne's, the Celery workers'. Without it, the answer is this
process's own. Only for `Authorization: Bearer $METRICS_TOKEN` or a staff
session: the figures say how busy the service is and who waits. With the HTTPS
redirect on, over plain HTTP only for callers in METRICS_PLAIN_HTTP_NETWORKS
(a scraper inside the network); any other is refused before its token is read,
so a scraper set up against the public host fails at once instead of sending
its token in clear at every scrape.

Prometheus scrapes each process by its own address (`10.0.0.5:8000`), a Host that
ALLOWED_HOSTS does not name: a scrape that carries a token is answered by
`TokenScrapeMiddleware`, ahead of the host check (and of sessions), so the token
decides, not the Host header. One with no token goes on to the host check and
the staff session like any request.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Callable, Iterator

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from ledger import metrics as ledger_metrics
from mangagen.api.errors import plain_error_response
from mangagen.kernel.client_address import client_address
from mangagen.kernel.errors import NotAuthenticated, PermissionDenied

from . import metrics
from .collectors import ScrapeTimeCollector


def multiprocess_dir() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


class ModeCollector(Collector):
    def describe(self) -> list:
        return []

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield GaugeMetricFamily(
            metrics.METRICS_PROCESSES,
            "1: counters are summed over every process of the machine; 0: this process's alone.",
            value=1 if multiprocess_dir() else 0,
        )


def exposition() -> bytes:
    """The text Prometheus reads: the machine's processes, then the shared gauges."""
    # The ledger counts in batches (ledger/metrics.py): this process's go in
    # now; every other process's within the ledger's FLUSH_SECONDS.
    ledger_metrics.flush()
    if multiprocess_dir():
        processes = CollectorRegistry()
        multiprocess.MultiProcessCollector(processes)
    else:
        processes = REGISTRY
    shared = CollectorRegistry()
    shared.register(ScrapeTimeCollector())
    shared.register(ModeCollector())
    return generate_latest(processes) + generate_latest(shared)


def _unauthenticated(detail: str) -> JsonResponse:
    return plain_error_response(NotAuthenticated(detail, challenge='Bearer realm="metrics"'))


def plain_http_allowed(request: HttpRequest) -> bool:
    """Whether this request may read /metrics as it came: over HTTPS, with the HTTPS
    redirect off, or from an address in METRICS_PLAIN_HTTP_NETWORKS."""
    if request.is_secure() or not settings.SECURE_SSL_REDIRECT:
        return True
    try:  # the caller as the throttles count it: the proxy's last hop, an IPv6 /64
        caller = ipaddress.ip_network(client_address(request), strict=False)
    except ValueError:
        return False
    for listed in settings.METRICS_PLAIN_HTTP_NETWORKS:
        network = ipaddress.ip_network(listed.strip(), strict=False)
        if network.version == caller.version and caller.subnet_of(network):  # type: ignore[arg-type]
            return True
    return False


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus text format, for the bearer of METRICS_TOKEN or for staff; over plain
    HTTP (with the HTTPS redirect on) only from METRICS_PLAIN_HTTP_NETWORKS."""
    if not plain_http_allowed(request):
        return plain_error_response(
            PermissionDenied(
                "Over plain HTTP, /metrics answers only the networks of "
                "METRICS_PLAIN_HTTP_NETWORKS; scrape it over HTTPS."
            )
        )
    header = request.headers.get("Authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        expected = settings.METRICS_TOKEN
        if scheme.lower() != "bearer" or not expected:
            return _unauthenticated("Send Authorization: Bearer <METRICS_TOKEN>.")
        if not hmac.compare_digest(token.strip().encode(), expected.encode()):
            return _unauthenticated("That token is not METRICS_TOKEN.")
    elif not request.user.is_authenticated:
        return _unauthenticated("Send Authorization: Bearer <METRICS_TOKEN>.")
    elif not request.user.is_staff:
        return plain_error_response(PermissionDenied("Metrics are for operators (staff) only."))
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)


class TokenScrapeMiddleware:
    """`GET /metrics` with an Authorization header, answered before the host check
    (settings.MIDDLEWARE puts it right after the probes)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info == "/metrics" and "Authorization" in request.headers:
            return metrics_view(request)
        return self.get_response(request)
