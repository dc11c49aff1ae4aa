"""Who is asking, as every per-address bound counts it: one client address for the
throttles (mangagen/api/throttles.py), the sign-in lockout and sign-ups
(mangagen/accounts/throttle.py), the /metrics network check and the log lines.

The address is the connection's (`REMOTE_ADDR`) unless the app is BEHIND_PROXY:
then it is the hop TRUSTED_PROXY_HOPS from the right of `X-Forwarded-For`, the one
the outermost trusted proxy wrote. Everything left of it is whatever the client
sent, so a client rotating the header is still one address (DRF's own `get_ident`
read the whole header: a new value was a new caller). A hop that is not an
address, or a header shorter than the trusted chain, counts as the connection's
address. An IPv6 address counts as its /64 (what one home or host is given), an
IPv4-mapped one as its IPv4 address; so the result is at most 43 characters, a
bounded part of any cache key made from it.
"""

from __future__ import annotations

import hashlib
import ipaddress

from django.conf import settings
from django.http import HttpRequest

UNKNOWN = "unknown"  # a connection with no IP address (a Unix socket, a test without one)


def client_address(request: HttpRequest) -> str:
    """The caller's address as the per-address bounds count it (see the module)."""
    connection = counted_address(request.META.get("REMOTE_ADDR", ""))
    if not settings.BEHIND_PROXY:
        return connection
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    hops = [hop.strip() for hop in forwarded.split(",")]
    trusted = max(1, int(settings.TRUSTED_PROXY_HOPS))
    if len(hops) < trusted or not forwarded.strip():
        return connection
    found = counted_address(hops[-trusted])
    return connection if found == UNKNOWN else found


def counted_address(address: str) -> str:
    """An address as it is counted: IPv6 as its /64, IPv4-mapped IPv6 as IPv4, anything
    that is not an IP address as `unknown`."""
    try:
        parsed = ipaddress.ip_address(address.strip().strip("[]"))
    except ValueError:
        return UNKNOWN
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:  # ::ffff:a.b.c.d is an IPv4 caller
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{parsed}/64", strict=False))
    return str(parsed)


def key_part(value: str, *, longest: int = 64) -> str:
    """`value` as a piece of a cache key of bounded length: itself when short and plain,
    else a digest of it."""
    if len(value) <= longest and value.isascii() and value.isprintable() and " " not in value:
        return value
    return hashlib.sha256(value.encode()).hexdigest()[:32]
