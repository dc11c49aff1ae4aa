"""One error shape for the whole API: {"error": "<code>", "detail": "<human text>"}."""

from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from ledger import errors as ledger_errors


def exception_handler(exc, context):
    if isinstance(exc, ledger_errors.LedgerError):
        code = status.HTTP_402_PAYMENT_REQUIRED
        if not isinstance(exc, ledger_errors.InsufficientCredits):
            code = status.HTTP_409_CONFLICT
        return Response({"error": exc.code, "detail": str(exc)}, status=code)
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


def _first_message(detail) -> str:
    if isinstance(detail, dict):
        for field, value in detail.items():
            message = _first_message(value)
            return message if field == "non_field_errors" else f"{field}: {message}"
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    return str(detail)
