"""Row locks of payments: the one way a service locks an event, a purchase or a
checkout session.

A webhook's transaction takes its Stripe event's row first, then the purchase
it is about (or the checkout session it completes), then the ledger's own rows
(in the ledger's order). No payment lock is ever taken with a comic's.
"""

from __future__ import annotations

from .models import CheckoutSession, Purchase, StripeEvent


def lock_event(*, pk: int) -> StripeEvent:
    """The stored event's row, locked: concurrent deliveries of one event wait here."""
    return StripeEvent.objects.select_for_update().get(pk=pk)


def lock_purchase(*, pk: int) -> Purchase:
    """The purchase's row, locked. Raises Purchase.DoesNotExist."""
    return Purchase.objects.select_for_update().get(pk=pk)


def lock_purchase_of(*, payment_intent: str) -> Purchase:
    """The purchase of that payment intent, locked; made (empty) if it has none yet,
    whichever of a payment's events comes first."""
    purchase, _ = Purchase.objects.select_for_update().get_or_create(payment_intent=payment_intent)
    return purchase


def lock_unrecorded_session(*, reference: str) -> CheckoutSession | None:
    """The checkout session of that reference whose Stripe id was never recorded,
    locked; None if there is none."""
    return (
        CheckoutSession.objects.select_for_update()
        .filter(reference=reference, session_id__isnull=True)
        .order_by("pk")
        .first()
    )
