from django.urls import path

from . import api

urlpatterns = [
    path(
        "storyboards/<int:pk>/translations/",
        api.TranslationsView.as_view(),
        name="api-translations",
    ),
    path(
        "storyboards/<int:pk>/translations/<str:lang>/",
        api.TranslationView.as_view(),
        name="api-translation",
    ),
    path(
        "storyboards/<int:pk>/translations/<str:lang>/draft/",
        api.TranslationDraftView.as_view(),
        name="api-translation-draft",
    ),
]
