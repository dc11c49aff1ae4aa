"""Why a payment request is refused: the codes in one enum, and the errors that carry them.

Checkout answers through the API's handler; the Stripe webhook (a plain Django view,
answered to Stripe, not to a person) answers the same body shape through
`plain_error_response`.
"""

from __future__ import annotations

from enum import StrEnum

from mangagen.kernel.errors import ApplicationError, InvalidInput


class PaymentRefusal(StrEnum):
    PAYMENTS_UNAVAILABLE = "payments_unavailable"
    PAYMENT_PROVIDER_ERROR = "payment_provider_error"
    BAD_SIGNATURE = "bad_signature"
    PROCESSING_FAILED = "processing_failed"


class PaymentsUnavailable(
    ApplicationError, code=PaymentRefusal.PAYMENTS_UNAVAILABLE, status=503
): ...


class PaymentProviderError(
    ApplicationError, code=PaymentRefusal.PAYMENT_PROVIDER_ERROR, status=502
):
    """Stripe did not answer (or refused) a checkout; nothing was recorded."""


class UnknownPack(InvalidInput):
    """A checkout for a pack that is not on sale (400 `invalid`)."""


class BadSignature(ApplicationError, code=PaymentRefusal.BAD_SIGNATURE, status=400):
    """A webhook call that Stripe did not sign with STRIPE_WEBHOOK_SECRET, or signed too
    long ago; nothing is stored."""


class ProcessingFailed(ApplicationError, code=PaymentRefusal.PROCESSING_FAILED, status=500):
    """A signed event that could not be applied; the 500 makes Stripe send it again."""
