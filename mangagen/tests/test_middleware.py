"""The middleware chain runs in one thread under daphne (mangagen/sync_middleware.py)."""

from asgiref.sync import SyncToAsync, async_to_sync
from django.conf import settings
from django.test import AsyncClient
from django.utils.module_loading import import_string

# Django's own middleware as they come (async-capable), with WhiteNoise's (sync only).
AS_THEY_COME = [
    "mangagen.observability.middleware.ProbesMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
]


def crossings_of_a_request(monkeypatch) -> int:
    """How many times one request through the ASGI handler enters a thread."""
    entered = []
    original = SyncToAsync.__call__

    async def counted(self, *args, **kwargs):
        entered.append(self.func)
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(SyncToAsync, "__call__", counted)
    response = async_to_sync(AsyncClient().get)("/no-such-page/")
    assert response.status_code == 404
    return len(entered)


def test_every_middleware_is_sync_only():
    """One that may run async makes Django cross between the loop and a thread at its
    boundaries (and a MiddlewareMixin run async, twice more within it)."""
    crossing = [
        path
        for path in settings.MIDDLEWARE
        if getattr(import_string(path), "async_capable", False)
        or not getattr(import_string(path), "sync_capable", True)
    ]
    assert crossing == []


def test_the_chain_adds_no_crossing(monkeypatch, settings):
    """With every middleware sync-only, a request crosses as often through the whole
    chain as through one middleware: Django's own steps (the request's signals, the
    chain, the view or 404 page) and nothing per middleware."""
    ours = crossings_of_a_request(monkeypatch)
    settings.MIDDLEWARE = AS_THEY_COME[:1]
    one = crossings_of_a_request(monkeypatch)
    settings.MIDDLEWARE = AS_THEY_COME
    as_they_come = crossings_of_a_request(monkeypatch)
    assert ours == one
    assert as_they_come >= one + len(AS_THEY_COME)
