"""Selling credits: Checkout Sessions out, signed webhooks in, each grant exactly once.

Every payment grants under the Checkout Session's id as the ledger's
idempotency key, so no two events about one payment can grant twice. Events
arrive in any order and any number of times; the end state is the same.

Only sessions this app created grant, and only for what they were created
for: the Stripe account may sell other products too, so a completed session
we have no record of is stored and acknowledged, and one whose amount,
currency or mode differ from its pack is held for an operator.
"""

from __future__ import annotations

import logging
import uuid

import stripe
from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext

from ledger import services as ledger
from ledger.models import SystemAccount, Transfer

from .errors import BadSignature, PaymentProviderError, PaymentsUnavailable
from .lock_objects import lock_event, lock_purchase, lock_purchase_of, lock_unrecorded_session
from .models import CheckoutSession, FailedRefund, Outcome, Purchase, ReviewReason, StripeEvent
from .packs import Pack

logger = logging.getLogger(__name__)


def stripe_client() -> stripe.StripeClient:
    if not settings.STRIPE_SECRET_KEY:
        raise PaymentsUnavailable(gettext("Buying credits is not available on this site yet."))
    base = {"api": settings.STRIPE_API_BASE} if settings.STRIPE_API_BASE else {}
    return stripe.StripeClient(
        settings.STRIPE_SECRET_KEY, base_addresses=base, max_network_retries=2
    )


def create_checkout(*, user, chosen: Pack, return_url: str) -> str:
    """A Stripe Checkout Session for the pack; returns the URL to send the person to.

    What the session is for is recorded first (pending), and its reference sent
    in the session's metadata: if recording Stripe's session id afterwards
    fails, the payment still finds its record (`_record_of`) and grants.
    """
    client = stripe_client()
    record = CheckoutSession.objects.create(
        user=user,
        pack=chosen.code,
        credits=chosen.credits,
        amount=chosen.price,
        currency=chosen.currency.lower(),
        livemode=_live_key(),
    )
    metadata = {
        "user_id": str(user.pk),
        "pack": chosen.code,
        "credits": str(chosen.credits),
        CHECKOUT_REFERENCE: str(record.reference),
    }
    try:
        session = _create_session(
            client, chosen, metadata, return_url, user_id=user.pk, reference=str(record.reference)
        )
    except stripe.StripeError as exc:
        logger.warning("Stripe refused a checkout: %s", exc)
        raise PaymentProviderError(
            gettext("The payment provider is not answering; try again in a minute.")
        ) from exc
    reported = session.to_dict()
    try:
        CheckoutSession.objects.filter(pk=record.pk).update(
            session_id=reported["id"], livemode=reported.get("livemode", record.livemode)
        )
    except DatabaseError:
        # The person can still pay: the payment finds this record by its reference.
        logger.exception("Could not record checkout %s's session id", record.reference)
    return session.url


# The metadata key that carries a CheckoutSession's own reference to Stripe and back.
CHECKOUT_REFERENCE = "checkout_reference"


def _create_session(
    client: stripe.StripeClient,
    chosen: Pack,
    metadata: dict,
    return_url: str,
    *,
    user_id: int,
    reference: str,
):
    return client.v1.checkout.sessions.create(
        # A retried create (max_network_retries) gives back the same session.
        options={"idempotency_key": f"checkout:{reference}"},
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
            "client_reference_id": str(user_id),
            "metadata": metadata,
            "payment_intent_data": {"metadata": metadata},
            "success_url": f"{return_url}?checkout=success&session_id={{CHECKOUT_SESSION_ID}}",
            "cancel_url": f"{return_url}?checkout=cancelled",
        },
    )


def _live_key() -> bool:
    """Whether the configured key moves real money (`sk_live_…`, `rk_live_…`)."""
    return "_live_" in settings.STRIPE_SECRET_KEY


# --- webhooks --------------------------------------------------------------------------


def verify(*, payload: bytes, signature: str | None) -> dict:
    """The event, if Stripe signed it recently; raises BadSignature otherwise (and for a
    body that is not an event)."""
    # The caller is told only that the call was refused; why (a setting, the library's
    # words) goes to the log, with the request's id.
    unsigned = gettext(
        "The call is not signed with the webhook's secret, or was signed too long ago."
    )
    if not settings.STRIPE_WEBHOOK_SECRET:
        logger.error("A Stripe webhook call was refused: STRIPE_WEBHOOK_SECRET is not set")
        raise BadSignature(unsigned)
    try:
        event = stripe.Webhook.construct_event(
            payload,
            signature,
            settings.STRIPE_WEBHOOK_SECRET,
            tolerance=settings.STRIPE_WEBHOOK_TOLERANCE_SECONDS,
        )
    except stripe.SignatureVerificationError as exc:
        logger.warning("A Stripe webhook call was refused: %s", exc)
        raise BadSignature(unsigned) from exc
    except ValueError as exc:  # signed, but not JSON
        logger.warning("A signed Stripe webhook call is not an event: %s", exc)
        raise BadSignature(gettext("The body is not a Stripe event.")) from exc
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
            locked = lock_event(pk=stripe_event.pk)
            if locked.processed:
                return locked
            outcome = HANDLERS.get(locked.type, _ignore)(locked.payload["data"]["object"])
            locked.processed_at = timezone.now()
            locked.error = ""
            locked.outcome = outcome
            locked.save(update_fields=["processed_at", "error", "outcome"])
            return locked
    except Exception as exc:
        StripeEvent.objects.filter(pk=stripe_event.pk).update(error=f"{type(exc).__name__}: {exc}")
        raise


def _checkout_paid(session: dict) -> Outcome:
    if session.get("payment_status") != "paid":
        return Outcome.WAITING  # `unpaid`: an async payment; its success event grants
    record = _record_of(session)
    if record is None:
        logger.info("Checkout %s was not created by this app; nothing granted", session["id"])
        return Outcome.FOREIGN
    intent = session.get("payment_intent") or f"session:{session['id']}"
    purchase = lock_purchase_of(payment_intent=intent)
    purchase.session_id = record.session_id
    purchase.user = record.user
    purchase.pack = record.pack
    purchase.credits = record.credits
    purchase.amount = session.get("amount_total") or 0
    purchase.currency = (session.get("currency") or "").lower()
    purchase.paid_at = purchase.paid_at or timezone.now()
    if not _granted(purchase):
        purchase.review = _mismatch(record=record, session=session) or ""
    purchase.save()
    if purchase.review:
        logger.warning(
            "Checkout %s paid %s %s (livemode %s) for the %s pack: held for an operator",
            record.session_id,
            purchase.amount,
            purchase.currency,
            session.get("livemode"),
            record.pack,
        )
        return Outcome.REVIEW
    _grant(purchase)
    return Outcome.APPLIED


def _record_of(session: dict) -> CheckoutSession | None:
    """This app's record of a completed session: by its id, or (when the id could not be
    recorded after Stripe answered) by the reference its metadata carries back."""
    record = CheckoutSession.objects.filter(session_id=session["id"]).first()
    if record is not None:
        return record
    reference = (session.get("metadata") or {}).get(CHECKOUT_REFERENCE) or ""
    try:
        reference = str(uuid.UUID(reference))
    except ValueError:
        return None
    record = lock_unrecorded_session(reference=reference)
    if record is not None:
        record.session_id = session["id"]
        record.save(update_fields=["session_id"])
    return record


def _mismatch(*, record: CheckoutSession, session: dict) -> ReviewReason | None:
    """What Stripe says was paid, against what the session was created to sell."""
    if session.get("amount_total") != record.amount:
        return ReviewReason.AMOUNT
    if (session.get("currency") or "").lower() != record.currency:
        return ReviewReason.CURRENCY
    if bool(session.get("livemode")) != record.livemode:
        return ReviewReason.LIVEMODE
    return None


def _granted(purchase: Purchase) -> bool:
    return Transfer.objects.filter(key=_grant_key(purchase.session_id)).exists()


def _grant_key(session_id: str) -> str:
    return f"stripe:checkout:{session_id}"


def _grant(purchase: Purchase) -> None:
    """Grants the purchase's credits (once: keyed by its session), then applies what came first."""
    ledger.grant(
        account=ledger.account_for(purchase.user),
        amount=purchase.credits,
        key=_grant_key(purchase.session_id),
        reason=f"Purchase of the {purchase.pack or 'credit'} pack",
        source=SystemAccount.PURCHASES,
    )
    _apply_refunds(purchase)  # a refund that arrived first
    if purchase.disputed_at:  # a dispute that arrived first
        ledger.flag_account(account=ledger.account_for(purchase.user), reason="payment disputed")


def grant_after_review(*, purchase: Purchase) -> bool:
    """An operator accepts a held purchase: grants it once. False if it was not held."""
    with transaction.atomic():
        locked = lock_purchase(pk=purchase.pk)
        if not locked.review or locked.user_id is None:
            return False
        locked.review = ""
        locked.save(update_fields=["review"])
        _grant(locked)
        return True


def _async_payment_failed(session: dict) -> Outcome:
    logger.info("Async payment failed for checkout %s", session.get("id"))
    return Outcome.APPLIED


def _our_purchase(obj: dict, not_ours: str) -> Purchase | None:
    """The purchase of a charge's, refund's or dispute's payment intent, locked; None
    when it names none (logged with `not_ours`, given the object's id): a Charges-API
    charge, never one of this app's Checkout sessions."""
    intent = obj.get("payment_intent") or ""
    if not intent:
        logger.info(not_ours, obj.get("id"))
        return None
    return lock_purchase_of(payment_intent=intent)


def _charge_refunded(charge: dict) -> Outcome:
    purchase = _our_purchase(charge, "Refund of charge %s with no payment intent: not ours")
    if purchase is None:
        return Outcome.FOREIGN
    refunded = int(charge.get("amount_refunded") or 0)
    purchase.amount_refunded = max(purchase.amount_refunded, refunded)
    if not purchase.amount:
        purchase.amount = int(charge.get("amount") or 0)
    purchase.save()
    _apply_refunds(purchase)
    return Outcome.APPLIED


def _refund_updated(refund: dict) -> Outcome:
    """A refund that failed after it was reported gives back what it took, once.

    The charge's `amount_refunded` counted the refund when it was issued; a
    failed refund's amount is subtracted from it, each refund id once.
    """
    if refund.get("status") != "failed":
        return Outcome.IGNORED
    purchase = _our_purchase(refund, "Refund %s with no payment intent: not ours")
    if purchase is None:
        return Outcome.FOREIGN
    _, new = FailedRefund.objects.get_or_create(
        refund_id=refund["id"],
        defaults={"purchase": purchase, "amount": int(refund.get("amount") or 0)},
    )
    if new:
        purchase.amount_refund_failed += int(refund.get("amount") or 0)
        purchase.save(update_fields=["amount_refund_failed"])
        _apply_refunds(purchase)
    return Outcome.APPLIED


def _apply_refunds(purchase: Purchase) -> None:
    """Brings what is revoked in line with what stays refunded: revokes what a refund owes
    (never below zero: a shortfall flags the account), gives back what a failed refund took."""
    if not purchase.amount or purchase.review or not _granted(purchase):
        return  # not granted: the grant applies this when it comes
    owed = purchase.credits * purchase.refunded // purchase.amount
    taken = purchase.credits_revoked - purchase.credits_restored
    account = ledger.account_for(purchase.user)
    if owed < taken:
        give_back = taken - owed
        purchase.credits_restored += give_back
        ledger.grant(
            account=account,
            amount=give_back,
            key=f"stripe:refund-failed:{purchase.payment_intent}:{purchase.credits_restored}",
            reason="A refund failed; its credits are back",
            source=SystemAccount.REFUNDS,
        )
        purchase.save(update_fields=["credits_restored"])
        return
    due = owed - taken
    if due <= 0:
        return
    account.refresh_from_db()
    take = min(due, account.available)
    if take:
        ledger.revoke(
            account=account,
            amount=take,
            key=f"stripe:refund:{purchase.payment_intent}:{purchase.credits_revoked + take}",
            reason=f"Refund of {purchase.refunded} {purchase.currency}",
            sink=SystemAccount.REFUNDS,
        )
    purchase.credits_revoked += take
    purchase.save(update_fields=["credits_revoked"])
    if take < due:
        ledger.flag_account(
            account=account,
            reason=f"refund of {due} credit(s) but only {take} could be revoked",
        )


def _dispute_created(dispute: dict) -> Outcome:
    purchase = _our_purchase(dispute, "Dispute %s of a charge with no payment intent: not ours")
    if purchase is None:
        return Outcome.FOREIGN
    purchase.disputed_at = purchase.disputed_at or timezone.now()
    purchase.save(update_fields=["disputed_at"])
    if purchase.user_id:
        ledger.flag_account(account=ledger.account_for(purchase.user), reason="payment disputed")
    return Outcome.APPLIED


def _ignore(obj: dict) -> Outcome:
    """Unknown event types are stored and acknowledged."""
    return Outcome.IGNORED


HANDLERS = {
    "checkout.session.completed": _checkout_paid,
    "checkout.session.async_payment_succeeded": _checkout_paid,
    "checkout.session.async_payment_failed": _async_payment_failed,
    "charge.refunded": _charge_refunded,
    "charge.refund.updated": _refund_updated,
    "refund.failed": _refund_updated,
    "charge.dispute.created": _dispute_created,
}
