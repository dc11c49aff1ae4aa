"""Request bodies as the API's views read them."""

from __future__ import annotations


def json_object(request) -> dict:
    """The request's body when it is an object (JSON or a form), else {}: a
    view that reads named fields takes an array or a bare value as naming none."""
    return request.data if isinstance(request.data, dict) else {}
