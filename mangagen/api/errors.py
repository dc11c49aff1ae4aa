"""One error shape for the whole API: {"error": "<code>", "detail": "<human text>"}."""

from django.core.exceptions import PermissionDenied
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from ledger import errors as ledger_errors
from mangagen.quotas import LimitReached


def exception_handler(exc, context):
    if isinstance(exc, LimitReached):
        response = Response(
            {"error": str(exc.code), "detail": str(exc)}, status=status.HTTP_429_TOO_MANY_REQUESTS
        )
        if exc.retry_after:
            response["Retry-After"] = str(exc.retry_after)
        return response
    if isinstance(exc, ledger_errors.LedgerError):
        if isinstance(exc, ledger_errors.InsufficientCredits):
            code = status.HTTP_402_PAYMENT_REQUIRED
        elif isinstance(exc, ledger_errors.AccountFlagged):
            code = status.HTTP_403_FORBIDDEN
        else:
            code = status.HTTP_409_CONFLICT
        return Response({"error": exc.code, "detail": str(exc)}, status=code)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        response.data = {
            "error": "invalid",
            "detail": _first_message(exc.detail),
            "fields": exc.detail,
        }
    elif isinstance(exc, exceptions.APIException):
        detail = exc.detail
        response.data = {
            "error": getattr(detail, "code", None) or exc.default_code,
            "detail": str(detail),
        }
    return response


def _first_message(detail, path: str = "") -> str:
    """The first error, named by where it is: `panels[2].dialogue[0].text: …`."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            if key == "non_field_errors":
                return _first_message(value, path)
            step = f"[{key}]" if isinstance(key, int) or str(key).isdigit() else f".{key}"
            return _first_message(value, f"{path}{step}" if path else str(key))
    if isinstance(detail, list) and detail:
        return _first_message(detail[0], path)
    return f"{path}: {detail}" if path else str(detail)
