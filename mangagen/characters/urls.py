from django.urls import path

from . import api

urlpatterns = [
    path(
        "storyboards/<int:pk>/characters/<path:name>/sheet/",
        api.SheetView.as_view(),
        name="api-character-sheet",
    ),
]
