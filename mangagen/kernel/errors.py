"""The base of every refusal the API answers on purpose, and the codes every view shares.

A service raises a subclass; the one DRF exception handler
(`mangagen.api.errors.exception_handler`) answers it as
`{"error": code, "detail": str(exc), **extra()}` with its `status`
(docs/api.md, "Errors"). Views do not catch them, and never build an error
body themselves. The ledger's errors (`ledger.errors.LedgerError`, which
cannot import this app) follow the same protocol: `code`, from an enum.

Each area keeps its codes in one enum beside its error classes (its
`errors.py`); the OpenAPI schema declares, for each operation, the codes of
the classes its view says it raises (`mangagen.api.schema.refuses`).
"""

from __future__ import annotations

from enum import StrEnum


class Code(StrEnum):
    """The codes any API view may answer whatever it does (DRF's own, through the
    handler), and the generic refusal of input (`invalid`)."""

    INVALID = "invalid"
    PARSE_ERROR = "parse_error"
    NOT_AUTHENTICATED = "not_authenticated"
    PERMISSION_DENIED = "permission_denied"
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    NOT_ACCEPTABLE = "not_acceptable"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    THROTTLED = "throttled"
    TOO_LARGE = "too_large"  # a request body past its route's bound (kernel/request_bodies.py)


class ApplicationError(Exception):
    """A refusal. A subclass states its facts as class keywords, each once:
    `class NoSuchX(ApplicationError, code=Refusal.NO_SUCH_X, status=404)`; what it does
    not state it inherits. They are read back as class attributes (`code`, `status`,
    `codes`)."""

    code: str = "error"
    status: int = 400
    # The enum of codes an instance may carry, when its code is chosen as it is raised
    # (an upload's problem, a limit); None: always `code`.
    codes: type[StrEnum] | None = None

    def __init_subclass__(
        cls,
        *,
        code: StrEnum | str | None = None,
        status: int | None = None,
        codes: type[StrEnum] | None = None,
        **kwargs,
    ) -> None:
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code
        if status is not None:
            cls.status = status
        if codes is not None:
            cls.codes = codes

    def extra(self) -> dict:
        """Fields the body carries beside `error` and `detail`."""
        return {}

    def headers(self) -> dict[str, str]:
        """Headers the answer carries (Retry-After, …)."""
        return {}

    @classmethod
    def declared_codes(cls) -> list[str]:
        """Every `error` code an instance of this class may answer with."""
        return [str(c) for c in cls.codes] if cls.codes else [str(cls.code)]


class InvalidInput(ApplicationError, code=Code.INVALID, status=400):
    """Input refused where no serializer names the field (a query parameter, a token);
    `detail` says what was wrong."""


class NotFound(ApplicationError, code=Code.NOT_FOUND, status=404):
    """No such thing, or not yours (a view outside DRF; DRF's own answers the same code)."""


class NotAuthenticated(ApplicationError, code=Code.NOT_AUTHENTICATED, status=401):
    """No credentials where a view outside DRF needs them (`/metrics`: 401 with
    `WWW-Authenticate`)."""

    def __init__(self, detail: str, *, challenge: str = ""):
        super().__init__(detail)
        self.challenge = challenge

    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": self.challenge} if self.challenge else {}


class PermissionDenied(ApplicationError, code=Code.PERMISSION_DENIED, status=403):
    """Signed in, but not allowed (a view outside DRF; DRF's own answers the same code)."""
