"""Failed sign-ins counted per username and per address; too many lock both out for a while.

Counters live in the cache (Redis in production, shared by every process) and
expire `LOGIN_LOCKOUT_SECONDS` after the first failure of a run, so a lockout
ends by itself. A username is counted whether or not such a person exists, so
a lockout reveals nothing about who has an account. A successful sign-in
clears its username's counter, never the address's: one good password does
not buy an address another round of guesses at other people's.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

LOCKED_OUT = "locked_out"


def client_address(request: HttpRequest) -> str:
    """The caller's address: the proxy's last X-Forwarded-For hop when one is in front."""
    if settings.BEHIND_PROXY:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if hops:
            return hops[-1]
    return request.META.get("REMOTE_ADDR", "") or "unknown"


def _key(kind: str, value: str) -> str:
    digest = hashlib.sha256(value.strip().casefold().encode()).hexdigest()[:32]
    return f"login-failures:{kind}:{digest}"


def _keys(*, username: str, address: str) -> list[tuple[str, int]]:
    return [
        (_key("username", username), settings.LOGIN_FAILURES_PER_USERNAME),
        (_key("address", address), settings.LOGIN_FAILURES_PER_ADDRESS),
    ]


def is_locked_out(*, username: str, address: str) -> bool:
    """True once either the username or the address has used up its failures."""
    return any(
        (cache.get(key) or 0) >= limit for key, limit in _keys(username=username, address=address)
    )


def record_failure(*, username: str, address: str) -> None:
    for key, _ in _keys(username=username, address=address):
        # add() starts the window only for the first failure; incr() is atomic in Redis.
        if not cache.add(key, 1, timeout=settings.LOGIN_LOCKOUT_SECONDS):
            try:
                cache.incr(key)
            except ValueError:  # expired between add and incr
                cache.add(key, 1, timeout=settings.LOGIN_LOCKOUT_SECONDS)


def record_success(*, username: str) -> None:
    cache.delete(_key("username", username))


def lockout_message() -> str:
    minutes = max(settings.LOGIN_LOCKOUT_SECONDS // 60, 1)
    return (
        "Too many failed sign-in attempts. For your safety, sign-in is paused; "
        f"try again in {minutes} minute{'s' if minutes != 1 else ''}."
    )


def signup_allowed(*, address: str) -> bool:
    """Counts a sign-up attempt from `address`; False past SIGNUP_PER_ADDRESS_PER_HOUR."""
    key = _key("signup", address)
    if not cache.add(key, 1, timeout=3600):
        try:
            return cache.incr(key) <= settings.SIGNUP_PER_ADDRESS_PER_HOUR
        except ValueError:
            cache.add(key, 1, timeout=3600)
    return True
