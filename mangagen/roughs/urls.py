from django.urls import path

from . import api

urlpatterns = [
    path("storyboards/<int:pk>/roughs/", api.RoughsView.as_view(), name="api-storyboard-roughs"),
    path(
        "storyboards/<int:pk>/panels/<int:index>/rough/",
        api.PanelRoughView.as_view(),
        name="api-panel-rough",
    ),
]
