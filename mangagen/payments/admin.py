"""Operators see every Stripe event and purchase; a failed event can be reprocessed,
and a purchase held for review (paid differently from its pack) can be granted by hand."""

from django.contrib import admin, messages

from ledger.admin import RecordAdminMixin

from . import services
from .models import CheckoutSession, FailedRefund, Purchase, StripeEvent


class RecordAdmin(RecordAdminMixin, admin.ModelAdmin):
    """What Stripe told us is a record: never added or deleted by hand, every field read-only."""


class ProcessedFilter(admin.SimpleListFilter):
    title = "processed"
    parameter_name = "processed"

    def lookups(self, request, model_admin):
        return (("yes", "Processed"), ("no", "Not processed"))

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(processed_at__isnull=False)
        if self.value() == "no":
            return queryset.filter(processed_at__isnull=True)
        return queryset


@admin.register(StripeEvent)
class StripeEventAdmin(RecordAdmin):
    list_display = (
        "stripe_id",
        "type",
        "received_at",
        "processed_at",
        "outcome",
        "deliveries",
        "error",
    )
    list_filter = ("type", "outcome", ProcessedFilter)
    search_fields = ("stripe_id",)
    actions = ("reprocess",)

    @admin.action(description="Reprocess selected events", permissions=["change"])
    def reprocess(self, request, queryset):
        for event in queryset.filter(processed_at__isnull=True):
            try:
                services.process(stripe_event=event)
            except Exception as exc:
                self.message_user(request, f"{event}: {exc}", messages.ERROR)
                continue
            self.log_change(request, event, "reprocessed by hand")
            self.message_user(request, f"{event} processed.", messages.SUCCESS)


@admin.register(Purchase)
class PurchaseAdmin(RecordAdmin):
    list_display = (
        "payment_intent",
        "user",
        "pack",
        "credits",
        "amount",
        "currency",
        "paid_at",
        "amount_refunded",
        "credits_revoked",
        "credits_restored",
        "disputed_at",
        "review",
    )
    list_filter = ("pack", "review")
    search_fields = ("payment_intent", "session_id", "user__username")
    actions = ("grant_after_review",)

    @admin.action(description="Grant the pack after review", permissions=["change"])
    def grant_after_review(self, request, queryset):
        for purchase in queryset.exclude(review=""):
            reason = purchase.get_review_display()
            if services.grant_after_review(purchase=purchase):
                self.log_change(request, purchase, f"granted after review ({reason})")
                self.message_user(request, f"{purchase} granted.", messages.SUCCESS)


@admin.register(CheckoutSession)
class CheckoutSessionAdmin(RecordAdmin):
    list_display = ("session_id", "user", "pack", "credits", "amount", "currency", "livemode")
    search_fields = ("session_id", "user__username")


@admin.register(FailedRefund)
class FailedRefundAdmin(RecordAdmin):
    list_display = ("refund_id", "purchase", "amount", "created_at")
