from django.urls import path

from . import api

urlpatterns = [
    path("storyboards/<int:pk>/speculate/", api.SpeculateView.as_view(), name="api-speculate"),
    path(
        "storyboards/<int:pk>/speculate/leave/",
        api.LeaveView.as_view(),
        name="api-speculate-leave",
    ),
]
