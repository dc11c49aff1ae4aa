"""Stripe: every verified event, and every purchase it told us about."""

import uuid

from django.conf import settings
from django.db import models


class Outcome(models.TextChoices):
    """What applying a Stripe event did; operators filter on it in admin."""

    APPLIED = "applied", "Applied"
    WAITING = "waiting", "Waiting (payment not settled yet)"
    FOREIGN = "foreign", "Not ours (a session this app did not create): nothing granted"
    REVIEW = "review", "Held for an operator: nothing granted"
    IGNORED = "ignored", "Ignored (an event type this app does not act on)"


class ReviewReason(models.TextChoices):
    """Why a paid checkout was held for an operator instead of granted."""

    AMOUNT = "amount", "Amount paid differs from the pack's price"
    CURRENCY = "currency", "Currency differs from the pack's"
    LIVEMODE = "livemode", "Live/test mode differs from the session's"


class StripeEvent(models.Model):
    stripe_id = models.CharField(max_length=255, unique=True)
    type = models.CharField(max_length=100, db_index=True)
    payload = models.JSONField()
    received_at = models.DateTimeField(auto_now_add=True)
    processed_at = models.DateTimeField(null=True, blank=True)
    deliveries = models.PositiveIntegerField(default=1)
    error = models.TextField(blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, blank=True)

    class Meta:
        ordering = ["-pk"]

    def __str__(self) -> str:
        return f"{self.type} {self.stripe_id}"

    @property
    def processed(self) -> bool:
        return self.processed_at is not None


class CheckoutSession(models.Model):
    """A Checkout Session this app created, and what it was created for.

    A completed session is granted only if it is one of these and Stripe's
    amount, currency and mode match: other products may share the Stripe account.
    The row is written before Stripe is asked (pending: no `session_id` yet) and
    its `reference` travels in the session's metadata, so a payment whose session
    id could not be recorded still finds what it was created for.
    """

    reference = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    session_id = models.CharField(max_length=255, unique=True, null=True, blank=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    pack = models.CharField(max_length=32)
    credits = models.PositiveIntegerField()
    amount = models.PositiveIntegerField(help_text="The pack's price, in minor units.")
    currency = models.CharField(max_length=8)
    livemode = models.BooleanField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-pk"]

    def __str__(self) -> str:
        return f"checkout {self.session_id} ({self.pack})"


class Purchase(models.Model):
    """One Checkout payment, keyed by its PaymentIntent so refunds and disputes find it.

    A refund can arrive before the completion it refunds: then the row exists
    first with only what the refund said, and the completion fills it in.
    """

    payment_intent = models.CharField(max_length=255, unique=True)
    session_id = models.CharField(max_length=255, blank=True, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    pack = models.CharField(max_length=32, blank=True)
    credits = models.PositiveIntegerField(default=0)
    amount = models.PositiveIntegerField(default=0, help_text="Charged, in minor units.")
    currency = models.CharField(max_length=8, blank=True)
    paid_at = models.DateTimeField(null=True, blank=True)
    amount_refunded = models.PositiveIntegerField(default=0)
    credits_revoked = models.PositiveIntegerField(
        default=0, help_text="Ever revoked for refunds (only grows)."
    )
    credits_restored = models.PositiveIntegerField(
        default=0, help_text="Ever given back because a refund failed (only grows)."
    )
    amount_refund_failed = models.PositiveIntegerField(
        default=0, help_text="Refunds that failed after they were reported, in minor units."
    )
    review = models.CharField(
        max_length=16,
        choices=ReviewReason.choices,
        blank=True,
        help_text="Set: paid but not granted until an operator approves it.",
    )
    disputed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-pk"]

    def __str__(self) -> str:
        return f"purchase {self.payment_intent} ({self.credits} credits)"

    @property
    def refunded(self) -> int:
        """What was refunded and stayed refunded, in minor units."""
        return max(min(self.amount_refunded, self.amount) - self.amount_refund_failed, 0)


class FailedRefund(models.Model):
    """A refund that Stripe reported and that later failed; counted once."""

    refund_id = models.CharField(max_length=255, unique=True)
    purchase = models.ForeignKey(Purchase, on_delete=models.PROTECT, related_name="failed_refunds")
    amount = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"failed refund {self.refund_id} ({self.amount})"
