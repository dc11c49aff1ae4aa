from django.apps import AppConfig


class SpeculationConfig(AppConfig):
    name = "speculation"
    verbose_name = "Speculation"

    def ready(self):
        from . import receivers  # noqa: F401  (connects to the studio's job signals)
