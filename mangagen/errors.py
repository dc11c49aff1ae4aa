"""The base of every refusal the API answers on purpose.

A service raises a subclass; the one DRF exception handler
(`mangagen.api.errors.exception_handler`) answers it as
`{"error": code, "detail": str(exc), **extra()}` with its `status`
(docs/api.md, "Errors"). Views do not catch them. The ledger's errors
(`ledger.errors.LedgerError`, which cannot import this app) follow the same
protocol: `code`, `status`.
"""

from __future__ import annotations


class ApplicationError(Exception):
    code: str = "error"
    status: int = 400

    def extra(self) -> dict:
        """Fields the body carries beside `error` and `detail`."""
        return {}

    def headers(self) -> dict[str, str]:
        """Headers the answer carries (Retry-After, …)."""
        return {}
