"""Where operators reconcile: balances beside the journal, stale holds, the journal."""

from __future__ import annotations

import uuid

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html

from . import errors, selectors, services
from .models import Account, Hold, Transfer


class RecordAdminMixin:
    """A record written only through services: never added or deleted by hand, every
    field read-only (the change view stays, for admin actions).

    Every app's admin uses these two mixins; they live here because the ledger is
    the one app every other may import.
    """

    def has_add_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]


class ReadOnlyAdminMixin(RecordAdminMixin):
    """Not even changed: the ledger's rows and speculation's records are only listed."""

    def has_change_permission(self, request, obj=None):
        return False


class FlaggedFilter(admin.SimpleListFilter):
    title = "flagged"
    parameter_name = "flagged"

    def lookups(self, request, model_admin):
        return (("yes", "Flagged for an operator"),)

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(flagged_at__isnull=False)
        return queryset


@admin.register(Account)
class AccountAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = (
        "__str__",
        "kind",
        "balance",
        "held",
        "journal_available",
        "journal_held",
        "reconciled",
        "flagged_at",
        "flag_reason",
    )
    list_filter = ("kind", FlaggedFilter)
    actions = ("clear_flags", "grant_credits")

    def has_reconcile_permission(self, request):
        return request.user.has_perm("ledger.reconcile_hold")

    def has_grant_permission(self, request):
        """Granting writes a journal line: for those who may add transfers (superusers)."""
        return request.user.has_perm("ledger.add_transfer")

    @admin.action(description="Grant credits to selected accounts…", permissions=["grant"])
    def grant_credits(self, request, queryset):
        """Credits without Stripe: each selected person's account gets `amount` from the
        grants account, written as `manage.py grant_credits` writes it (a grant through
        the ledger's service, a key of its own, the operator's reason), with the
        operator's name in the reason and as the transfer's actor."""
        accounts = queryset.filter(kind=Account.Kind.USER).select_related("user")
        form = GrantForm(request.POST if "apply" in request.POST else None)
        if not form.is_bound or not form.is_valid():
            return TemplateResponse(
                request,
                "admin/ledger/grant_credits.html",
                {
                    **self.admin_site.each_context(request),
                    "title": "Grant credits",
                    "accounts": accounts,
                    "skipped": queryset.exclude(kind=Account.Kind.USER).count(),
                    "form": form,
                    "opts": self.model._meta,
                    "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                },
            )
        amount = form.cleaned_data["amount"]
        reason = f"admin {request.user.get_username()}: {form.cleaned_data['reason']}"[:REASON_MAX]
        done = 0
        for account in accounts.order_by("pk"):
            try:
                transfer = services.grant(
                    account=account,
                    amount=amount,
                    key=f"admin-grant:{uuid.uuid4()}",
                    reason=reason,
                    actor=request.user,
                )
            except errors.LedgerError as exc:
                self.message_user(request, f"{account}: {exc}", messages.ERROR)
                continue
            self.log_change(
                request, account, f"granted {amount} (transfer #{transfer.pk}): {reason}"
            )
            done += 1
        if done:
            self.message_user(
                request, f"Granted {amount} credit(s) to {done} account(s).", messages.SUCCESS
            )
        return None

    @admin.action(description="Clear the flag of selected accounts", permissions=["reconcile"])
    def clear_flags(self, request, queryset):
        for account in queryset.filter(flagged_at__isnull=False):
            reason = account.flag_reason
            services.clear_account_flag(account=account)
            self.log_change(request, account, f"flag cleared (was: {reason})")
        self.message_user(request, "Flags cleared.", messages.SUCCESS)

    search_fields = ("user__username", "code")
    change_list_template = "admin/ledger/change_list_with_reconciliation.html"

    def get_queryset(self, request):
        return selectors.with_journal_balances(super().get_queryset(request)).select_related("user")

    @admin.display(description="available", ordering="balance")
    def balance(self, obj):
        """Cached available credits; a system account's summed over its shards."""
        return obj.balance

    @admin.display(description="journal available", ordering="journal_available")
    def journal_available(self, obj):
        return obj.journal_available

    @admin.display(description="journal held", ordering="journal_held")
    def journal_held(self, obj):
        return obj.journal_held

    @admin.display(description="reconciled", boolean=True)
    def reconciled(self, obj):
        return (obj.balance, obj.held) == (obj.journal_available, obj.journal_held) and (
            obj.held == obj.open_holds_total
        )

    def get_urls(self):
        view = self.admin_site.admin_view(self.reconciliation_view)
        return [
            path("reconciliation/", view, name="ledger_reconciliation"),
            *super().get_urls(),
        ]

    def reconciliation_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        context = {
            **self.admin_site.each_context(request),
            "title": "Ledger reconciliation",
            "mismatches": selectors.reconciliation(),
            "checked_at": timezone.now(),
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/ledger/reconciliation.html", context)


class StaleFilter(admin.SimpleListFilter):
    title = "stale"
    parameter_name = "stale"

    def lookups(self, request, model_admin):
        return (("yes", "Stale (pending past expiry)"), ("no", "Not stale"))

    def queryset(self, request, queryset):
        stale = {"state": Hold.State.PENDING, "expires_at__lte": timezone.now()}
        if self.value() == "yes":
            return queryset.filter(**stale)
        if self.value() == "no":
            return queryset.exclude(**stale)
        return queryset


REASON_MAX = Transfer._meta.get_field("reason").max_length


class HoldResolutionForm(forms.Form):
    reason = forms.CharField(
        max_length=200, help_text="Why you are doing this; kept in the journal and the admin log."
    )
    amount = forms.IntegerField(
        min_value=1,
        required=False,
        help_text="Capture only: how much of each hold to spend (blank: all of it).",
    )


class GrantForm(forms.Form):
    amount = forms.IntegerField(
        min_value=1, max_value=100_000, help_text="Credits for each account."
    )
    reason = forms.CharField(
        max_length=150,
        help_text="Why (a support ticket, a promotion); kept in the journal and the admin log.",
    )


@admin.register(Hold)
class HoldAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = (
        "id",
        "account",
        "amount",
        "state",
        "reference",
        "created_at",
        "expires_at",
        "stale",
        "resolved_by",
        "resolution_reason",
    )
    list_filter = ("state", StaleFilter)
    search_fields = ("reference", "account__user__username")
    list_select_related = ("account__user", "resolved_by")
    actions = ("release_holds", "capture_holds")
    change_list_template = "admin/ledger/change_list_with_reconciliation.html"

    @admin.display(boolean=True, description="stale")
    def stale(self, obj):
        return obj.state == Hold.State.PENDING and obj.expires_at <= timezone.now()

    def has_reconcile_permission(self, request):
        return request.user.has_perm("ledger.reconcile_hold")

    @admin.action(description="Release selected holds…", permissions=["reconcile"])
    def release_holds(self, request, queryset):
        return self._resolve_by_hand(request, queryset, operation="release")

    @admin.action(description="Capture selected holds…", permissions=["reconcile"])
    def capture_holds(self, request, queryset):
        return self._resolve_by_hand(request, queryset, operation="capture")

    def _resolve_by_hand(self, request, queryset, *, operation: str):
        form = HoldResolutionForm(request.POST if "apply" in request.POST else None)
        if operation == "release":
            del form.fields["amount"]
        if not form.is_bound or not form.is_valid():
            return TemplateResponse(
                request,
                "admin/ledger/hold_resolution.html",
                {
                    **self.admin_site.each_context(request),
                    "title": f"{operation.capitalize()} holds",
                    "operation": operation,
                    "action": f"{operation}_holds",
                    "holds": queryset.select_related("account__user"),
                    "form": form,
                    "opts": self.model._meta,
                    "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                },
            )
        # The journal's reason holds REASON_MAX characters; a long operator name
        # must not make the database refuse the write (a 500 on PostgreSQL).
        reason = f"admin {request.user.get_username()}: {form.cleaned_data['reason']}"
        reason = reason[:REASON_MAX]
        done = 0
        for hold in queryset.order_by("pk"):
            try:
                if operation == "release":
                    services.release(hold=hold, reason=reason, actor=request.user)
                else:
                    services.capture(
                        hold=hold,
                        amount=form.cleaned_data.get("amount"),
                        reason=reason,
                        actor=request.user,
                    )
            except errors.LedgerError as exc:
                self.message_user(request, f"Hold #{hold.pk}: {exc}", messages.ERROR)
                continue
            self.log_change(request, hold, f"{operation}d by hand: {reason}")
            done += 1
        if done:
            self.message_user(request, f"{done} hold(s) {operation}d.", messages.SUCCESS)
        return None


@admin.register(Transfer)
class TransferAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = (
        "id",
        "created_at",
        "kind",
        "amount",
        "debit_account",
        "credit_account",
        "hold_link",
        "reason",
        "reference",
        "actor",
    )
    list_filter = ("kind",)
    search_fields = ("key", "reason", "reference")
    list_select_related = (
        "debit_account__user",
        "credit_account__user",
        "actor",
        "hold",
        "pending__hold",
    )

    @admin.display(description="hold")
    def hold_link(self, obj):
        if obj.kind in (Transfer.Kind.GRANT, Transfer.Kind.REVOKE):
            return "—"
        hold = obj.hold if obj.kind == Transfer.Kind.PENDING else obj.pending.hold
        url = reverse("admin:ledger_hold_change", args=[hold.pk])
        return format_html('<a href="{}">#{}</a>', url, hold.pk)
