"""One error shape for the whole API: {"error": "<code>", "detail": "<human text>", …extra}.

The one DRF exception handler (settings REST_FRAMEWORK["EXCEPTION_HANDLER"]):
an ApplicationError (mangagen/kernel/errors.py) or a ledger error is answered with
its own code and status; DRF's own errors keep their codes (`mangagen.kernel.errors.Code`).
Views catch none of them, and build no error body: a view outside DRF answers
an ApplicationError with `plain_error_response`. docs/api.md, "Errors", lists
the codes; the OpenAPI schema declares them per operation (`mangagen.api.schema`).
"""

import logging

from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.http import Http404, JsonResponse
from django.urls import reverse
from django.utils.translation import gettext_lazy
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from ledger import errors as ledger_errors
from ledger.errors import LedgerCode
from mangagen.kernel.errors import ApplicationError, Code

from .parsers import body_refusal

logger = logging.getLogger(__name__)

# The ledger cannot import this app: its refusals' statuses are set here (409 otherwise).
LEDGER_STATUS = {
    ledger_errors.InsufficientCredits: status.HTTP_402_PAYMENT_REQUIRED,
    ledger_errors.AccountFlagged: status.HTTP_403_FORBIDDEN,
}


def ledger_status(kind: type[ledger_errors.LedgerError]) -> int:
    """The HTTP status a ledger refusal of this kind is answered with."""
    return next(
        (code for refusal, code in LEDGER_STATUS.items() if issubclass(kind, refusal)),
        status.HTTP_409_CONFLICT,
    )


def exception_handler(exc, context):
    exc = body_refusal(exc) or exc  # a body past Django's bounds: 400 parse_error, not HTML
    if isinstance(exc, ApplicationError):
        return Response(_body(exc), status=exc.status, headers=exc.headers())
    if isinstance(exc, ledger_errors.LedgerError):
        return _ledger_refusal(exc, context)
    if isinstance(exc, Http404 | ObjectDoesNotExist):
        # (a row gone mid-request, e.g. a comic deleted while its Generate waited for it)
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        response.data = {
            "error": Code.INVALID,
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


def plain_error_response(exc: ApplicationError) -> JsonResponse:
    """The same answer for a view outside DRF (the image views, the Stripe webhook,
    /metrics): {"error", "detail"} with the error's status and headers."""
    response = JsonResponse(_body(exc), status=exc.status)
    for name, value in exc.headers().items():
        response[name] = value
    return response


def _body(exc: ApplicationError) -> dict:
    return {"error": str(exc.code), "detail": str(exc), **exc.extra()}


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


# The words a person reads for a ledger refusal that is not theirs to act on: the ledger's
# own name holds and idempotency keys, so they go to the log instead.
LEDGER_DETAIL = {
    LedgerCode.IDEMPOTENCY_CONFLICT: gettext_lazy(
        "That request was already made with other details; nothing was changed."
    ),
    LedgerCode.HOLD_ALREADY_RESOLVED: gettext_lazy(
        "Those credits were already settled; nothing was changed."
    ),
    LedgerCode.HOLD_EXPIRED: gettext_lazy(
        "The credits held for this have been released; nothing was charged."
    ),
}
LEDGER_REFUSED = gettext_lazy("The credits could not be used for this; nothing was changed.")
# Refusals whose words are written for the person (translated, with what to do next).
SPOKEN_BY_THE_LEDGER = (ledger_errors.InsufficientCredits, ledger_errors.AccountFlagged)


def _ledger_refusal(exc: ledger_errors.LedgerError, context) -> Response:
    body = {"error": str(exc.code), "detail": str(exc)}
    if not isinstance(exc, SPOKEN_BY_THE_LEDGER):
        logger.warning("The ledger refused a request (%s): %s", exc.code, exc)
        body["detail"] = str(LEDGER_DETAIL.get(exc.code, LEDGER_REFUSED))
    if isinstance(exc, ledger_errors.InsufficientCredits):
        # Every 402 says what to do about it: how many are left and where to buy more.
        # A view may say what the credit was for (`insufficient_credits_detail`).
        body["detail"] = getattr(context.get("view"), "insufficient_credits_detail", str(exc))
        body["available"] = exc.available
        body["purchase_url"] = reverse("credits")
    return Response(body, status=ledger_status(type(exc)))
