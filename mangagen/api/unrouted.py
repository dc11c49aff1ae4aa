"""`/api/<path>/` that no route serves: 404 in the API's error shape, not an HTML page.

A client that builds a URL wrongly (an id that is not a number, an endpoint that
does not exist) reads the same `{"error": "not_found", …}` as for a storyboard
that is not theirs. Only paths ending in a slash are caught, so CommonMiddleware
still redirects `/api/me` to `/api/me/`.
"""

from django.http import HttpRequest, JsonResponse
from django.utils.translation import gettext

from mangagen.kernel.errors import NotFound

from .errors import plain_error_response


class SlashedPath:
    """A URL converter: any path that ends in a slash."""

    regex = ".+/"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


def unrouted(request: HttpRequest, rest: str) -> JsonResponse:
    return plain_error_response(NotFound(gettext("Not found.")))
