"""The admin "Speculation" page: the records, and what they add up to."""

from django.conf import settings
from django.contrib import admin

from . import metrics
from .models import Speculation


@admin.register(Speculation)
class SpeculationAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "user",
        "storyboard",
        "outcome",
        "reason",
        "job",
        "created_at",
        "ended_at",
    )
    list_filter = ("outcome", "reason")
    list_select_related = ("user", "storyboard", "job")
    change_list_template = "admin/speculation/change_list.html"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def changelist_view(self, request, extra_context=None):
        extra = {
            "periods": metrics.report(),
            "render_cost": settings.RENDER_COST_USD,
            "gpu_warm_per_day": settings.GPU_WARM_USD_PER_DAY,
        }
        return super().changelist_view(request, {**(extra_context or {}), **extra})
