from django.apps import AppConfig


class MangagenConfig(AppConfig):
    name = "mangagen"
    verbose_name = "Studio"
