"""Typed errors of the ledger. Every refusal leaves every balance untouched.

Each error's `code` is a member of `LedgerCode`, the ledger's one list of them: the API
answers it as `error`, `ledger_operations_total` counts it as `result`. The words of those
a person may see (no credit left, a frozen account) follow the interface's language; the
codes do not.
"""

from enum import StrEnum

from django.utils.translation import gettext

# SQLSTATEs ledger_authorize raises when a racer spent the credits (or an
# operator flagged the account) between its check and its conditional UPDATE:
# the statement rolls back its own rows (migration 0006).
SQLSTATE_FLAGGED = "LF001"
SQLSTATE_INSUFFICIENT = "LF002"


class LedgerCode(StrEnum):
    LEDGER_ERROR = "ledger_error"
    INSUFFICIENT_CREDITS = "insufficient_credits"
    IDEMPOTENCY_CONFLICT = "idempotency_conflict"
    HOLD_ALREADY_RESOLVED = "hold_already_resolved"
    HOLD_EXPIRED = "hold_expired"
    INVALID_AMOUNT = "invalid_amount"
    ACCOUNT_FLAGGED = "account_flagged"


class LedgerError(Exception):
    """Base class of every ledger refusal. A subclass names its code as a class keyword
    (`class HoldExpired(LedgerError, code=LedgerCode.HOLD_EXPIRED)`), read back as `code`."""

    code: LedgerCode = LedgerCode.LEDGER_ERROR

    def __init_subclass__(cls, *, code: LedgerCode | None = None, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code


class InsufficientCredits(LedgerError, code=LedgerCode.INSUFFICIENT_CREDITS):
    def __init__(self, *, available: int, requested: int):
        self.available = available
        self.requested = requested
        super().__init__(
            gettext("%(requested)s credit(s) requested, %(available)s available.")
            % {"requested": requested, "available": available}
        )


class IdempotencyConflict(LedgerError, code=LedgerCode.IDEMPOTENCY_CONFLICT):
    """The key was used before for an operation with different parameters."""

    def __init__(self, *, key: str, detail: str = ""):
        self.key = key
        super().__init__(f"Key {key!r} was already used with other parameters. {detail}".strip())


class HoldAlreadyResolved(LedgerError, code=LedgerCode.HOLD_ALREADY_RESOLVED):
    """A second, different resolution of a hold. Never a silent success."""

    def __init__(self, *, hold_id: int, state: str):
        self.hold_id = hold_id
        self.state = state
        super().__init__(f"Hold #{hold_id} is already {state}.")


class HoldExpired(LedgerError, code=LedgerCode.HOLD_EXPIRED):
    """The hold is past its `expires_at`: it can no longer be captured."""

    def __init__(self, *, hold_id: int, detail: str = ""):
        self.hold_id = hold_id
        super().__init__(detail or f"Hold #{hold_id} has expired and can no longer be captured.")


class HoldAlreadyExpired(HoldAlreadyResolved, HoldExpired, code=LedgerCode.HOLD_EXPIRED):
    """The sweep already expired the hold; both a resolution and an expiry error."""

    def __init__(self, *, hold_id: int):
        self.hold_id = hold_id
        self.state = "expired"
        LedgerError.__init__(self, f"Hold #{hold_id} has already expired.")


class InvalidAmount(LedgerError, ValueError, code=LedgerCode.INVALID_AMOUNT): ...


class AccountFlagged(LedgerError, code=LedgerCode.ACCOUNT_FLAGGED):
    """The account is frozen for an operator (a dispute, an unrecoverable refund)."""

    def __init__(self, *, reason: str = ""):
        self.reason = reason
        if reason:
            message = gettext(
                "This account is on hold for review by our team (%(reason)s). "
                "Please contact support."
            ) % {"reason": reason}
        else:
            message = gettext(
                "This account is on hold for review by our team. Please contact support."
            )
        super().__init__(message)
