"""Rate limits: DRF's scoped throttle counting callers by the one client address, and
two of our own.

Every throttle a view names comes from here. DRF's own `get_ident` reads the whole
`X-Forwarded-For` header, whatever sent it: a caller rotating the header was a new
caller each time, and every value a cache key of its length. Here a signed-out caller
(and, for AddressThrottle, every caller) is its client address
(mangagen/kernel/client_address.py: the trusted proxy hop, an IPv6 /64), the same the
sign-in lockout counts, and each key part is of bounded length.
"""

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from rest_framework import throttling
from rest_framework.permissions import SAFE_METHODS

from mangagen.kernel.client_address import client_address, key_part


class ScopedRateThrottle(throttling.ScopedRateThrottle):
    """DRF's: the view's `throttle_scope`, per person, or per client address signed out."""

    def get_ident(self, request):
        return key_part(client_address(request))


class WritesThrottle(ScopedRateThrottle):
    """The view's `throttle_scope`, counted on writes only (reads stay free)."""

    def allow_request(self, request, view):
        if request.method in SAFE_METHODS:
            return True
        return super().allow_request(request, view)


class AddressThrottle(ScopedRateThrottle):
    """The view's `throttle_scope`, counted per address whoever asks (signed in or not),
    for public pages a signed-in reader must not read past the address's rate.

    Counted in fixed windows of the rate's period, one counter per address and window:
    a request costs one round trip to Redis at any rate. (DRF's own keeps a list of
    every request's time in the window and writes it back whole on each one, which
    grows with the rate: at a reading link's rate, hundreds of entries a request.)
    """

    def allow_request(self, request, view):
        self.scope = getattr(view, self.scope_attr, None)
        if not self.scope:
            return True
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        now = self.timer()
        window = int(now // self.duration)
        key = f"throttle:{key_part(self.scope)}:{self.get_ident(request)}:{window}"
        count = counted(key, ttl=self.duration + 1)
        self.wait_seconds = (window + 1) * self.duration - now
        return count <= self.num_requests

    def wait(self):
        return self.wait_seconds


def counted(key: str, *, ttl: int) -> int:
    """Adds one to the cache's counter `key` (made at 0 if missing, kept `ttl` seconds)
    and returns it. On Redis, in one round trip (SET NX with its expiry, then INCR, in
    one pipeline; Django's own add and incr take three)."""
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        name = backend.make_and_validate_key(key)
        # Django's client for that key (its connection pool): the cache's own client.
        client = backend._cache.get_client(name, write=True)
        pipe = client.pipeline(transaction=False)
        pipe.set(name, 0, ex=ttl, nx=True)
        pipe.incr(name)
        return pipe.execute()[1]
    backend.add(key, 0, ttl)
    try:
        return backend.incr(key)
    except ValueError:  # the counter expired between the two calls
        backend.set(key, 1, ttl)
        return 1
