"""Who may read the API's own description."""

from django.conf import settings
from rest_framework.permissions import BasePermission


class StaffUnlessDebug(BasePermission):
    """Anyone on a local demo (DEBUG on); only staff in production, where the schema
    would hand an attacker a map of every endpoint."""

    def has_permission(self, request, view) -> bool:
        return bool(settings.DEBUG or (request.user and request.user.is_staff))
