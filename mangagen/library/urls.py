from django.urls import path

from . import api
from .models import CastMember, SavedPlace

urlpatterns = [
    path("cast/", api.LibraryView.as_view(kind="cast"), name="api-cast"),
    path("cast/<int:pk>/", api.LibraryEntryView.as_view(model=CastMember), name="api-cast-member"),
    path("places/", api.LibraryView.as_view(kind="places"), name="api-library-places"),
    path(
        "places/<int:pk>/",
        api.LibraryEntryView.as_view(model=SavedPlace),
        name="api-library-place",
    ),
    path(
        "storyboards/<int:pk>/characters/",
        api.AddToComicView.as_view(field="cast"),
        name="api-storyboard-add-character",
    ),
    path(
        "storyboards/<int:pk>/places/",
        api.AddToComicView.as_view(field="place"),
        name="api-storyboard-add-place",
    ),
]
