"""The middleware of MIDDLEWARE, declared synchronous only, so that under daphne a
request crosses from the event loop into a thread once, not at every middleware.

Django runs an ASGI request through the middleware chain in the mode each one
declares. Its own middleware (MiddlewareMixin), django-prometheus's and
django-guid's say they can run async too, and WhiteNoise's and our probes' only
sync: a chain that mixes them crosses between the loop and a thread at every
boundary, and a MiddlewareMixin run async crosses twice more (`process_request`
and `process_response` are sync code). With every one sync-only, Django runs the
whole chain in one thread. Every view here is sync, so nothing runs on the loop
anyway: this only takes the crossings away (a signed-in API read on daphne went
from 12.5 to 8.7 ms at the median on the 2-core machine; more under load, where
each crossing waits for the loop).
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth import middleware as auth
from django.contrib.messages import middleware as messages
from django.contrib.sessions import middleware as sessions
from django.middleware import clickjacking, common, csrf, locale, security
from django_guid.middleware import guid_middleware as _guid
from django_prometheus import middleware as prometheus


def sync_only(middleware: type) -> type:
    """The same middleware class, declared sync-only (Django then hands it a sync
    `get_response`, and MiddlewareMixin runs its sync path)."""
    return type(
        middleware.__name__, (middleware,), {"async_capable": False, "__module__": __name__}
    )


PrometheusBeforeMiddleware = sync_only(prometheus.PrometheusBeforeMiddleware)
SecurityMiddleware = sync_only(security.SecurityMiddleware)
SessionMiddleware = sync_only(sessions.SessionMiddleware)
LocaleMiddleware = sync_only(locale.LocaleMiddleware)
CommonMiddleware = sync_only(common.CommonMiddleware)
CsrfViewMiddleware = sync_only(csrf.CsrfViewMiddleware)
AuthenticationMiddleware = sync_only(auth.AuthenticationMiddleware)
MessageMiddleware = sync_only(messages.MessageMiddleware)
XFrameOptionsMiddleware = sync_only(clickjacking.XFrameOptionsMiddleware)
PrometheusAfterMiddleware = sync_only(prometheus.PrometheusAfterMiddleware)


def guid_middleware(get_response: Callable) -> Callable:
    """django-guid's request id, given a sync `get_response` (so it runs its sync path)."""
    return _guid(get_response)


guid_middleware.sync_capable = True  # type: ignore[attr-defined]
guid_middleware.async_capable = False  # type: ignore[attr-defined]
