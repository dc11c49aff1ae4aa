"""Answers the orchestrator's probes before anything else runs; names the client on the
log lines of every other request.

Kubernetes and load balancers probe a process by its own address over plain
HTTP: the host check (ALLOWED_HOSTS) and the HTTPS redirect would answer 400
or 301 to that, and sessions, request ids and metrics have nothing to do with
a probe. So `/healthz` and `/readyz` are answered here, first; they reveal
nothing but whether the process and its database and Redis answer.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from mangagen.kernel.client_address import client_address

from .health import healthz, readyz
from .logs import from_client

PROBES: dict[str, Callable[[HttpRequest], HttpResponse]] = {
    "/healthz": healthz,
    "/readyz": readyz,
}


class ProbesMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        probe = PROBES.get(request.path_info.rstrip("/"))
        if probe is not None and request.method in ("GET", "HEAD"):
            return probe(request)
        return self.get_response(request)


class ClientOnLogLines:
    """Every log line a request writes carries its client address (`client`), the one
    the throttles and the sign-in lockout count: so a line about a refusal names
    whom the bound counted."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with from_client(client_address(request)):
            return self.get_response(request)
