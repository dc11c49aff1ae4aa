from django.apps import AppConfig


class MangagenConfig(AppConfig):
    name = "mangagen"
    verbose_name = "Studio"

    def ready(self):
        from mangagen.observability import metrics

        metrics.start_ledger_at_zero()
        # Every render kind known by its name in every process (render_kinds.kind.named):
        # the modules that declare them.
        import mangagen.characters.kinds
        import mangagen.jobs.rendering
        import mangagen.roughs.kinds  # noqa: F401
        from mangagen.renderers import registry

        registry.check_purposes()  # a purpose whose provider cannot do it refuses to start
