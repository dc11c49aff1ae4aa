"""Rate limits beyond DRF's own."""

from rest_framework.permissions import SAFE_METHODS
from rest_framework.throttling import ScopedRateThrottle


class WritesThrottle(ScopedRateThrottle):
    """The view's `throttle_scope`, counted on writes only (reads stay free)."""

    def allow_request(self, request, view):
        if request.method in SAFE_METHODS:
            return True
        return super().allow_request(request, view)


class AddressThrottle(ScopedRateThrottle):
    """The view's `throttle_scope`, counted per address whoever asks (signed in or not),
    for public pages a signed-in reader must not read past the address's rate.

    Counted in fixed windows of the rate's period, one counter per address and window
    incremented in the cache: a request costs the same at any rate. (DRF's own keeps a
    list of every request's time in the window and writes it back whole on each one,
    which grows with the rate: at a reading link's rate, hundreds of entries a request.)
    """

    def allow_request(self, request, view):
        self.scope = getattr(view, self.scope_attr, None)
        if not self.scope:
            return True
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        now = self.timer()
        window = int(now // self.duration)
        key = f"throttle:{self.scope}:{self.get_ident(request)}:{window}"
        self.cache.add(key, 0, self.duration + 1)
        try:
            count = self.cache.incr(key)
        except ValueError:  # the window's counter expired between the two calls
            self.cache.set(key, 1, self.duration + 1)
            count = 1
        self.wait_seconds = (window + 1) * self.duration - now
        return count <= self.num_requests

    def wait(self):
        return self.wait_seconds
