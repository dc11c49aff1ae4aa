"""Selling credits: Checkout Sessions out, signed webhooks in, each grant exactly once.

Every payment grants under the Checkout Session's id as the ledger's
idempotency key, so no two events about one payment can grant twice. Events
arrive in any order and any number of times; the end state is the same.
"""

from __future__ import annotations

import logging

import stripe
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from ledger import services as ledger
from ledger.models import SystemAccount

from .models import Purchase, StripeEvent
from .packs import Pack, pack

logger = logging.getLogger(__name__)


class PaymentsUnavailable(Exception):
    code = "payments_unavailable"


def stripe_client() -> stripe.StripeClient:
    if not settings.STRIPE_SECRET_KEY:
        raise PaymentsUnavailable("Card payments are not configured on this server.")
    base = {"api": settings.STRIPE_API_BASE} if settings.STRIPE_API_BASE else {}
    return stripe.StripeClient(
        settings.STRIPE_SECRET_KEY, base_addresses=base, max_network_retries=2
    )


def create_checkout(*, user, chosen: Pack, return_url: str) -> str:
    """A Stripe Checkout Session for the pack; returns the URL to send the person to."""
    metadata = {"user_id": str(user.pk), "pack": chosen.code, "credits": str(chosen.credits)}
    session = stripe_client().v1.checkout.sessions.create(
        params={
            "mode": "payment",
            "line_items": [
                {
                    "quantity": 1,
                    "price_data": {
                        "currency": chosen.currency,
                        "unit_amount": chosen.price,
                        "product_data": {"name": f"{chosen.credits} Mangagen credits"},
                    },
                }
            ],
            "client_reference_id": str(user.pk),
            "metadata": metadata,
            "payment_intent_data": {"metadata": metadata},
            "success_url": f"{return_url}?checkout=success&session_id={{CHECKOUT_SESSION_ID}}",
            "cancel_url": f"{return_url}?checkout=cancelled",
        }
    )
    return session.url


# --- webhooks --------------------------------------------------------------------------


def verify(*, payload: bytes, signature: str | None) -> dict:
    """The event, if Stripe signed it recently; raises ValueError otherwise."""
    if not settings.STRIPE_WEBHOOK_SECRET:
        raise ValueError("STRIPE_WEBHOOK_SECRET is not set")
    try:
        event = stripe.Webhook.construct_event(
            payload,
            signature,
            settings.STRIPE_WEBHOOK_SECRET,
            tolerance=settings.STRIPE_WEBHOOK_TOLERANCE_SECONDS,
        )
    except stripe.SignatureVerificationError as exc:
        raise ValueError(f"bad signature: {exc}") from exc
    return event.to_dict()


def receive(*, event: dict) -> tuple[StripeEvent, bool]:
    """Stores a verified event and processes it once. Returns (event, processed now).

    Raises on a processing error, after recording it, with nothing else
    changed: the caller answers 500 and Stripe retries.
    """
    try:
        with transaction.atomic():
            stored, created = StripeEvent.objects.get_or_create(
                stripe_id=event["id"], defaults={"type": event["type"], "payload": event}
            )
    except IntegrityError:
        stored, created = StripeEvent.objects.get(stripe_id=event["id"]), False
    if not created:
        StripeEvent.objects.filter(pk=stored.pk).update(deliveries=F("deliveries") + 1)
    return process(stripe_event=stored), created


def process(*, stripe_event: StripeEvent) -> StripeEvent:
    """Applies a stored event if it is not yet applied. Concurrent twins wait, then skip."""
    try:
        with transaction.atomic():
            locked = StripeEvent.objects.select_for_update().get(pk=stripe_event.pk)
            if locked.processed:
                return locked
            HANDLERS.get(locked.type, _ignore)(locked.payload["data"]["object"])
            locked.processed_at = timezone.now()
            locked.error = ""
            locked.save(update_fields=["processed_at", "error"])
            return locked
    except Exception as exc:
        StripeEvent.objects.filter(pk=stripe_event.pk).update(error=f"{type(exc).__name__}: {exc}")
        raise


def _checkout_paid(session: dict) -> None:
    if session.get("payment_status") != "paid":
        return  # `unpaid`: an async payment; its success event grants
    metadata = session.get("metadata") or {}
    user_id = metadata.get("user_id") or session["client_reference_id"]
    user = get_user_model().objects.get(pk=int(user_id))
    chosen = pack(metadata.get("pack", ""))
    credits = int(metadata.get("credits") or (chosen.credits if chosen else 0))
    if credits <= 0:
        raise ValueError(f"checkout {session['id']} names no credits")
    intent = session.get("payment_intent") or f"session:{session['id']}"
    purchase, _ = Purchase.objects.select_for_update().get_or_create(payment_intent=intent)
    purchase.session_id = session["id"]
    purchase.user = user
    purchase.pack = metadata.get("pack", "")
    purchase.credits = credits
    purchase.amount = session.get("amount_total") or 0
    purchase.currency = session.get("currency") or ""
    purchase.paid_at = purchase.paid_at or timezone.now()
    purchase.save()
    ledger.grant(
        account=ledger.account_for(user),
        amount=credits,
        key=f"stripe:checkout:{session['id']}",
        reason=f"Purchase of the {purchase.pack or 'credit'} pack",
        source=SystemAccount.PURCHASES,
    )
    _apply_refunds(purchase)  # a refund that arrived first
    if purchase.disputed_at:  # a dispute that arrived first
        ledger.flag_account(account=ledger.account_for(user), reason="payment disputed")


def _async_payment_failed(session: dict) -> None:
    logger.info("Async payment failed for checkout %s", session.get("id"))


def _charge_refunded(charge: dict) -> None:
    intent = charge.get("payment_intent") or ""
    if not intent:
        raise ValueError(f"charge {charge.get('id')} has no payment_intent")
    purchase, _ = Purchase.objects.select_for_update().get_or_create(payment_intent=intent)
    refunded = int(charge.get("amount_refunded") or 0)
    purchase.amount_refunded = max(purchase.amount_refunded, refunded)
    if not purchase.amount:
        purchase.amount = int(charge.get("amount") or 0)
    purchase.save()
    _apply_refunds(purchase)


def _apply_refunds(purchase: Purchase) -> None:
    """Revokes credits for the refunded part not yet revoked; never below zero."""
    if not purchase.paid_at or not purchase.amount or not purchase.amount_refunded:
        return  # not granted yet: the completion applies this when it comes
    owed = purchase.credits * min(purchase.amount_refunded, purchase.amount) // purchase.amount
    due = owed - purchase.credits_revoked
    if due <= 0:
        return
    account = ledger.account_for(purchase.user)
    account.refresh_from_db()
    take = min(due, account.available)
    if take:
        ledger.revoke(
            account=account,
            amount=take,
            key=f"stripe:refund:{purchase.payment_intent}:{purchase.credits_revoked + take}",
            reason=f"Refund of {purchase.amount_refunded} {purchase.currency}",
            sink=SystemAccount.REFUNDS,
        )
    purchase.credits_revoked += take
    purchase.save(update_fields=["credits_revoked"])
    if take < due:
        ledger.flag_account(
            account=account,
            reason=f"refund of {due} credit(s) but only {take} could be revoked",
        )


def _dispute_created(dispute: dict) -> None:
    intent = dispute.get("payment_intent") or ""
    purchase, _ = Purchase.objects.select_for_update().get_or_create(payment_intent=intent)
    purchase.disputed_at = purchase.disputed_at or timezone.now()
    purchase.save(update_fields=["disputed_at"])
    if purchase.user_id:
        ledger.flag_account(account=ledger.account_for(purchase.user), reason="payment disputed")


def _ignore(obj: dict) -> None:
    """Unknown event types are stored and acknowledged."""


HANDLERS = {
    "checkout.session.completed": _checkout_paid,
    "checkout.session.async_payment_succeeded": _checkout_paid,
    "checkout.session.async_payment_failed": _async_payment_failed,
    "charge.refunded": _charge_refunded,
    "charge.dispute.created": _dispute_created,
}
