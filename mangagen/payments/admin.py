"""Operators see every Stripe event and purchase; a failed event can be reprocessed."""

from django.contrib import admin, messages

from . import services
from .models import Purchase, StripeEvent


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
class StripeEventAdmin(admin.ModelAdmin):
    list_display = ("stripe_id", "type", "received_at", "processed_at", "deliveries", "error")
    list_filter = ("type", ProcessedFilter)
    search_fields = ("stripe_id",)
    readonly_fields = [f.name for f in StripeEvent._meta.fields]
    actions = ("reprocess",)

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

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
class PurchaseAdmin(admin.ModelAdmin):
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
        "disputed_at",
    )
    list_filter = ("pack",)
    search_fields = ("payment_intent", "session_id", "user__username")
    readonly_fields = [f.name for f in Purchase._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
