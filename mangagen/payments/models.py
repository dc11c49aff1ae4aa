"""Stripe: every verified event, and every purchase it told us about."""

from django.conf import settings
from django.db import models


class StripeEvent(models.Model):
    stripe_id = models.CharField(max_length=255, unique=True)
    type = models.CharField(max_length=100, db_index=True)
    payload = models.JSONField()
    received_at = models.DateTimeField(auto_now_add=True)
    processed_at = models.DateTimeField(null=True, blank=True)
    deliveries = models.PositiveIntegerField(default=1)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-pk"]

    def __str__(self) -> str:
        return f"{self.type} {self.stripe_id}"

    @property
    def processed(self) -> bool:
        return self.processed_at is not None


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
    credits_revoked = models.PositiveIntegerField(default=0)
    disputed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-pk"]

    def __str__(self) -> str:
        return f"purchase {self.payment_intent} ({self.credits} credits)"
