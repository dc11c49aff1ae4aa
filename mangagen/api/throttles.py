"""Rate limits beyond DRF's own."""

from rest_framework.permissions import SAFE_METHODS
from rest_framework.throttling import ScopedRateThrottle


class WritesThrottle(ScopedRateThrottle):
    """The view's `throttle_scope`, counted on writes only (reads stay free)."""

    def allow_request(self, request, view):
        if request.method in SAFE_METHODS:
            return True
        return super().allow_request(request, view)
