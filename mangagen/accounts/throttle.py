"""Sign-in attempts counted per username from each address, and per address; too many
lock that pair (or that address) out a while.

An attempt is counted (atomically, in the cache: Redis in production, shared
by every process) *before* its password is checked, and refused once either
counter is past its limit: forty guesses sent at once get at most the limit's
worth of password checks, however many processes answer them. Counters expire
`LOGIN_LOCKOUT_SECONDS` after the first attempt of a run, so a lockout ends by
itself. A username's failures count per address (LOGIN_FAILURES_PER_USERNAME
from one address): one attacker guessing at an account locks it out from their
own address only, never for its owner elsewhere (a lockout per username alone
let six wrong passwords from anywhere lock the owner, and admins, out for 15
minutes). Guessing many accounts from one address is bounded by
LOGIN_FAILURES_PER_ADDRESS. A username is counted whether or not such a person
exists, so a lockout reveals nothing about who has an account. A successful
sign-in clears its username's counter from that address and gives its own
attempt back to the address, never more: one good password does not buy an
address another round of guesses at other people's. An IPv6 address counts as
its /64 (what one home or host is given), so rotating addresses inside it buys
nothing: the address is mangagen/kernel/client_address.py's, the one every
throttle counts.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.core.cache import cache
from django.utils.translation import ngettext

LOCKED_OUT = "locked_out"


def _key(kind: str, value: str) -> str:
    digest = hashlib.sha256(value.strip().casefold().encode()).hexdigest()[:32]
    return f"login-failures:{kind}:{digest}"


def _username_key(*, username: str, address: str) -> str:
    """The counter of one username's failures from one address."""
    return _key("username", f"{username.strip()}\n{address}")


def _keys(*, username: str, address: str) -> list[tuple[str, int]]:
    return [
        (_username_key(username=username, address=address), settings.LOGIN_FAILURES_PER_USERNAME),
        (_key("address", address), settings.LOGIN_FAILURES_PER_ADDRESS),
    ]


def take_attempt(*, username: str, address: str) -> bool:
    """Counts a sign-in attempt before its password is checked: False (refused, no
    check) once the username's count from this address, or the address's, is past its
    limit."""
    counts = [
        (_count(key, timeout=settings.LOGIN_LOCKOUT_SECONDS), limit)
        for key, limit in _keys(username=username, address=address)
    ]
    return all(count <= limit for count, limit in counts)


def record_success(*, username: str, address: str) -> None:
    """The password was right: the username starts afresh from this address, and the
    address gets this one attempt back (not the others)."""
    cache.delete(_username_key(username=username, address=address))
    try:
        if cache.decr(_key("address", address)) <= 0:
            cache.delete(_key("address", address))
    except ValueError:
        pass  # expired meanwhile: nothing to give back


def _count(key: str, *, timeout: float) -> int:
    """Adds one to the counter at `key` (made with `timeout` by the first) and returns
    it; add() and incr() are each atomic in Redis."""
    if cache.add(key, 1, timeout=timeout):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=timeout)
        return 1


def lockout_message() -> str:
    minutes = max(settings.LOGIN_LOCKOUT_SECONDS // 60, 1)
    return ngettext(
        "Too many failed sign-in attempts. For your safety, sign-in is paused; "
        "try again in %(minutes)s minute.",
        "Too many failed sign-in attempts. For your safety, sign-in is paused; "
        "try again in %(minutes)s minutes.",
        minutes,
    ) % {"minutes": minutes}


def signup_allowed(*, address: str) -> bool:
    """Counts a sign-up attempt from `address`; False past SIGNUP_PER_ADDRESS_PER_HOUR."""
    return _count(_key("signup", address), timeout=3600) <= settings.SIGNUP_PER_ADDRESS_PER_HOUR
