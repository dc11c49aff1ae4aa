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
    """The view's `throttle_scope`, counted per address whoever asks (signed in or not):
    public pages, which a signed-in reader must not read past the address's rate."""

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
