"""The pages a person sees when something is not there, not theirs, refused or broken
(with DEBUG off): one layout, `templates/error_page.html`, and what each says, once.

Django calls these for 400, 403, 404 and 500 (`handler400`, … in mangagen/urls.py) and
for a form refused by the CSRF check (`CSRF_FAILURE_VIEW`). They render without the
request's context processors, so they need no signed-in person and no database: Django
renders 500 and 400 when either may be what failed.
"""

from __future__ import annotations

from typing import NamedTuple

from django.http import HttpRequest, HttpResponse
from django.template import loader
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _


class ErrorPage(NamedTuple):
    status: int
    code: Promise  # "Error 404", as the page's small line says it
    heading: Promise  # also the window's title
    explanation: Promise


NOT_FOUND = ErrorPage(
    404,
    _("Error 404"),
    _("Page not found"),
    _(
        "There is nothing at this address, or it is not yours to see. Check the link, or "
        "start again from your comics."
    ),
)
NOT_ALLOWED = ErrorPage(
    403,
    _("Error 403"),
    _("Not allowed"),
    _("You cannot open this page. If you think you should, sign in with the account that owns it."),
)
FORM_REFUSED = ErrorPage(
    403,
    _("Error 403"),
    _("The form could not be sent"),
    _(
        "The page was open too long, or your browser did not send its cookies. Go back, "
        "reload the page and try again; nothing was changed."
    ),
)
BAD_REQUEST = ErrorPage(
    400,
    _("Error 400"),
    _("Bad request"),
    _("The server could not understand this request. Check the address and try again."),
)
BROKEN = ErrorPage(
    500,
    _("Error 500"),
    _("Something went wrong"),
    _("It was our fault, not yours, and it has been logged. Please try again in a moment."),
)


def error_response(page: ErrorPage) -> HttpResponse:
    """The page, in the interface's language, with its status."""
    html = loader.render_to_string("error_page.html", {"page": page})
    return HttpResponse(html, status=page.status)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return error_response(BAD_REQUEST)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return error_response(NOT_ALLOWED)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return error_response(NOT_FOUND)


def server_error(request: HttpRequest) -> HttpResponse:
    return error_response(BROKEN)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    return error_response(FORM_REFUSED)
