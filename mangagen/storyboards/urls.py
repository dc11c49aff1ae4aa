from django.urls import path

from mangagen.api.lettering import PanelLetteringView
from mangagen.pages import api as pages

from . import api

urlpatterns = [
    path("storyboards/", api.StoryboardListView.as_view(), name="api-storyboards"),
    path("storyboards/<int:pk>/", api.StoryboardDetailView.as_view(), name="api-storyboard"),
    path("storyboards/<int:pk>/draft/", api.DraftView.as_view(), name="api-storyboard-draft"),
    path("storyboards/<int:pk>/quote/", api.QuoteView.as_view(), name="api-storyboard-quote"),
    path(
        "storyboards/<int:pk>/panels/<int:index>/takes/",
        api.TakesView.as_view(),
        name="api-panel-takes",
    ),
    path(
        "storyboards/<int:pk>/panels/<int:index>/takes/<int:take>/choose/",
        api.ChooseTakeView.as_view(),
        name="api-panel-take-choose",
    ),
    path(
        "storyboards/<int:pk>/panels/<int:index>/lettering/",
        PanelLetteringView.as_view(),
        name="api-panel-lettering",
    ),
    path("storyboards/<int:pk>/pages/", pages.PagesView.as_view(), name="api-storyboard-pages"),
    path(
        "storyboards/<int:pk>/panels/<int:index>/reshape/",
        pages.ReshapeView.as_view(),
        name="api-panel-reshape",
    ),
    path("storyboards/<int:pk>/export/", pages.ExportView.as_view(), name="api-storyboard-export"),
    path(
        "storyboards/<int:pk>/export/psd/",
        pages.LayeredExportView.as_view(fmt="psd"),
        name="api-storyboard-export-psd",
    ),
    path(
        "storyboards/<int:pk>/export/ora/",
        pages.LayeredExportView.as_view(fmt="ora"),
        name="api-storyboard-export-ora",
    ),
]
