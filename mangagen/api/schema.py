"""The OpenAPI schema declares every error an operation can answer, taken from the code.

Each operation's responses gain, beside its successes, one entry per error
status: the one error body (the `Error` component) with `error` narrowed to
the codes that status can carry there. The codes come from two places:

- what every API view answers by the way it is built (`conventional`): the
  session it needs (403 `not_authenticated`; `permission_denied` for a write
  without the CSRF token), the object its URL names (404 `not_found`), the body
  it parses (400 `parse_error`, `invalid`; 415 `unsupported_media_type`), its
  throttles (429 `throttled`), its pages (404 for a page past the last);
- what the view's method says it raises, with `@refuses(...)`: error classes
  (an `ApplicationError` subclass, a ledger error) or one member of an error
  class's code enum (`Limit.DRAFTS`: `LimitReached` with that code). The class
  gives the status and the codes, so the schema cannot drift from what the
  handler answers.

docs/api.md lists the same codes for people; tests/test_schema_errors.py checks
that the two agree.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Any, TypeVar

from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers
from rest_framework.permissions import SAFE_METHODS

from ledger.errors import LedgerError
from mangagen.kernel.errors import ApplicationError, Code

from .errors import ledger_status
from .throttles import WritesThrottle

F = TypeVar("F", bound=Callable[..., Any])
Refusal = type[ApplicationError] | type[LedgerError] | Enum


def refuses(*errors: Refusal) -> Callable[[F], F]:
    """Declares on a view's method the refusals it may answer beyond the conventional
    ones: error classes, or single codes of an error class's enum."""

    def mark(method: F) -> F:
        method.refusals = (*getattr(method, "refusals", ()), *errors)  # type: ignore[attr-defined]
        return method

    return mark


def declared(error: Refusal) -> list[tuple[int, str]]:
    """The (status, code) pairs one `@refuses` entry stands for."""
    if isinstance(error, type) and issubclass(error, ApplicationError):
        return [(error.status, code) for code in error.declared_codes()]
    if isinstance(error, type) and issubclass(error, LedgerError):
        return [(ledger_status(error), str(error.code))]
    if isinstance(error, Enum):
        return [(_carrier(type(error)).status, str(error.value))]
    raise TypeError(f"{error!r} is neither an error class nor a code of one")


def _carrier(codes: type[Enum]) -> type[ApplicationError]:
    """The error class whose instances carry a code of `codes` (LimitReached for Limit)."""
    pending = list(ApplicationError.__subclasses__())
    while pending:
        kind = pending.pop()
        if kind.codes is codes:
            return kind
        pending += kind.__subclasses__()
    raise TypeError(f"no ApplicationError carries the codes of {codes.__name__}")


class ErrorSerializer(serializers.Serializer):
    """The one error body (the `Error` component)."""

    error = serializers.CharField(help_text="What was refused, as a code (the list per status).")
    detail = serializers.CharField(help_text="Why, for a person.")
    fields = serializers.DictField(
        required=False, help_text="`invalid`: every field's errors, as DRF gives them."
    )
    available = serializers.IntegerField(
        required=False, help_text="`insufficient_credits`: the credits the person has."
    )
    purchase_url = serializers.CharField(
        required=False, help_text="`insufficient_credits`: where to buy more."
    )


class ErrorDeclaringSchema(AutoSchema):
    """drf-spectacular's AutoSchema, with each operation's errors beside its answers."""

    def _get_response_bodies(self, direction: Any = "response") -> dict:
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        error = self.resolve_serializer(ErrorSerializer, "response").ref
        for status, codes in sorted(self.refusals().items()):
            narrowed = {"type": "object", "properties": {"error": {"enum": sorted(codes)}}}
            responses[str(status)] = {
                "description": ", ".join(f"`{code}`" for code in sorted(codes)),
                "content": {"application/json": {"schema": {"allOf": [error, narrowed]}}},
            }
        return responses

    def refusals(self) -> dict[int, set[str]]:
        """Every error status this operation can answer, with its codes."""
        found: dict[int, set[str]] = defaultdict(set)
        method = getattr(self.view, self.method.lower(), None)
        pairs = [p for e in getattr(method, "refusals", ()) for p in declared(e)]
        for status, code in [*self.conventional(), *pairs]:
            found[status].add(str(code))
        return found

    def conventional(self) -> Iterable[tuple[int, str]]:
        """What this operation answers by the way its view is built."""
        view, writes = self.view, self.method not in SAFE_METHODS
        if view.get_permissions():
            yield 403, Code.NOT_AUTHENTICATED
        if writes and view.get_authenticators():
            yield 403, Code.PERMISSION_DENIED  # the session's CSRF check
        if "{" in self.path or getattr(view, "pagination_class", None):
            yield 404, Code.NOT_FOUND
        if self._get_request_body() is not None:
            yield 400, Code.PARSE_ERROR
            yield 400, Code.INVALID
            yield 415, Code.UNSUPPORTED_MEDIA_TYPE
            yield 413, Code.TOO_LARGE  # past its route's bound (mangagen/web/body_limits.py)
        for throttle in view.get_throttles():
            if writes or not isinstance(throttle, WritesThrottle):
                yield 429, Code.THROTTLED
