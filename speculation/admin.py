"""The admin "Speculation" page: the records, and what they add up to."""

import redis
from django.conf import settings
from django.contrib import admin

from ledger.admin import ReadOnlyAdminMixin
from mangagen.renderers import observed
from mangagen.renderers.gpu_pool import GpuPool

from . import admission, report
from .models import Speculation


@admin.register(Speculation)
class SpeculationAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
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

    def changelist_view(self, request, extra_context=None):
        dwell = admission.dwell()
        provider = observed.current()
        try:
            pool = GpuPool().state(render_seconds=provider.render_seconds)
        except redis.RedisError:
            pool = None  # shown as unknown; the rest of the page stands
        extra = {
            "periods": report.report(),
            "render_cost": settings.RENDER_COST_USD,
            "gpu_warm_per_day": settings.GPU_WARM_USD_PER_DAY,
            "dwell": {
                "visits": len(dwell.observed),
                "p25": dwell.quantile(0.25),
                "median": dwell.median,
                "p75": dwell.quantile(0.75),
                "prior": settings.SPECULATION_DWELL_PRIOR_SECONDS,
            },
            "pool": pool,
            "provider": provider,
            "prior": {
                "cold_start": settings.RENDER_COLD_START_SECONDS,
                "render": settings.RENDER_SECONDS,
                "min_samples": observed.MIN_SAMPLES,
            },
            "budgets": {
                "global_used": admission.global_used(),
                "global": settings.SPECULATION_BUDGET_PER_HOUR,
                "people_over": admission.people_over_abandon_budget(),
                "abandons": settings.SPECULATION_PERSON_ABANDONS_PER_HOUR,
                "min_hit_rate": settings.SPECULATION_PERSON_MIN_HIT_RATE,
                "unproven": admission.unproven_inflight(),
                "unproven_cap": admission.unproven_cap(),
            },
            "chart": report.hourly(),
        }
        return super().changelist_view(request, {**(extra_context or {}), **extra})
