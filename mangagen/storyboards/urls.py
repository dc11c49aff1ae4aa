from django.urls import path

from . import api

urlpatterns = [
    path("storyboards/", api.StoryboardListView.as_view(), name="api-storyboards"),
    path("storyboards/<int:pk>/", api.StoryboardDetailView.as_view(), name="api-storyboard"),
    path("storyboards/<int:pk>/draft/", api.DraftView.as_view(), name="api-storyboard-draft"),
]
