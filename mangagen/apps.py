from django.apps import AppConfig


class MangagenConfig(AppConfig):
    name = "mangagen"
    verbose_name = "Studio"

    def ready(self):
        from mangagen.observability import metrics

        metrics.start_ledger_at_zero()
