"""What was observed of each provider: one row per render that reached its end.

Kept per renderer and model, the newest `observed.WINDOW` of each (older rows are
deleted as new ones come), in the database: every worker shares them and they
survive a restart of any process, Redis included."""

from django.db import models


class RenderSample(models.Model):
    renderer = models.CharField(max_length=32)
    model = models.CharField(max_length=200)
    queued = models.FloatField(help_text="Seconds waiting for capacity, ours or the provider's.")
    cold_start = models.FloatField(help_text="Seconds a worker booted (0: it was warm).")
    render = models.FloatField(help_text="Seconds drawing.")
    # A boot this render only waited the end of (someone else's, given back mid-boot): its
    # cold_start is not a whole boot and is left out of the cold start learned.
    partial_boot = models.BooleanField(default=False)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["renderer", "model", "-id"], name="mangagen_sample_recent")]

    def __str__(self) -> str:
        return f"{self.renderer} {self.model}: {self.cold_start:.1f}s + {self.render:.1f}s"
