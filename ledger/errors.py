"""Typed errors of the ledger. Every refusal leaves every balance untouched.

The words of those a person may see (no credit left, a frozen account) follow the
interface's language; the codes do not."""

from django.utils.translation import gettext

# SQLSTATEs ledger_authorize raises when a racer spent the credits (or an
# operator flagged the account) between its check and its conditional UPDATE:
# the statement rolls back its own rows (migration 0006).
SQLSTATE_FLAGGED = "LF001"
SQLSTATE_INSUFFICIENT = "LF002"


class LedgerError(Exception):
    """Base class of every ledger refusal."""

    code = "ledger_error"


class InsufficientCredits(LedgerError):
    code = "insufficient_credits"

    def __init__(self, *, available: int, requested: int):
        self.available = available
        self.requested = requested
        super().__init__(
            gettext("%(requested)s credit(s) requested, %(available)s available.")
            % {"requested": requested, "available": available}
        )


class IdempotencyConflict(LedgerError):
    """The key was used before for an operation with different parameters."""

    code = "idempotency_conflict"

    def __init__(self, *, key: str, detail: str = ""):
        self.key = key
        super().__init__(f"Key {key!r} was already used with other parameters. {detail}".strip())


class HoldAlreadyResolved(LedgerError):
    """A second, different resolution of a hold. Never a silent success."""

    code = "hold_already_resolved"

    def __init__(self, *, hold_id: int, state: str):
        self.hold_id = hold_id
        self.state = state
        super().__init__(f"Hold #{hold_id} is already {state}.")


class HoldExpired(LedgerError):
    """The hold is past its `expires_at`: it can no longer be captured."""

    code = "hold_expired"

    def __init__(self, *, hold_id: int, detail: str = ""):
        self.hold_id = hold_id
        super().__init__(detail or f"Hold #{hold_id} has expired and can no longer be captured.")


class HoldAlreadyExpired(HoldAlreadyResolved, HoldExpired):
    """The sweep already expired the hold; both a resolution and an expiry error."""

    code = "hold_expired"

    def __init__(self, *, hold_id: int):
        self.hold_id = hold_id
        self.state = "expired"
        LedgerError.__init__(self, f"Hold #{hold_id} has already expired.")


class InvalidAmount(LedgerError, ValueError):
    code = "invalid_amount"


class AccountFlagged(LedgerError):
    """The account is frozen for an operator (a dispute, an unrecoverable refund)."""

    code = "account_flagged"

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
