"""The studio's admin: jobs (read-only) and payments (mangagen/payments/admin.py)."""

from django.contrib import admin

from ledger.admin import RecordAdminMixin
from mangagen.accounts.forms import AdminLoginForm
from mangagen.jobs.models import Job, JobPanel
from mangagen.payments import admin as payments_admin  # noqa: F401  (registers its models)

# The admin's sign-in shares the site's throttle (per username and per address).
admin.site.login_form = AdminLoginForm


class JobPanelInline(admin.TabularInline):
    model = JobPanel
    fields = ("index", "state", "attempts", "lookahead", "hold", "cold", "render_seconds", "error")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Job)
class JobAdmin(RecordAdminMixin, admin.ModelAdmin):
    list_display = (
        "id",
        "owner",
        "storyboard",
        "confirmed",
        "state",
        "current_index",
        "created_at",
    )
    list_filter = ("state", "confirmed")
    search_fields = ("owner__username", "storyboard__title")
    list_select_related = ("owner", "storyboard")
    inlines = [JobPanelInline]
