from django.urls import path

from . import api

urlpatterns = [
    path(
        "storyboards/<int:pk>/places/<path:name>/picture/",
        api.PlacePictureView.as_view(),
        name="api-place-picture",
    ),
]
