from django.urls import path

from . import api

urlpatterns = [
    path("storyboards/<int:pk>/generate/", api.GenerateView.as_view(), name="api-generate"),
    path(
        "storyboards/<int:pk>/panels/<int:index>/touchup/",
        api.TouchUpView.as_view(),
        name="api-panel-touchup",
    ),
    path("jobs/<int:pk>/", api.JobView.as_view(), name="api-job"),
    path("jobs/<int:pk>/cancel/", api.CancelView.as_view(), name="api-job-cancel"),
    path(
        "jobs/<int:pk>/panels/<int:index>/approve/",
        api.ApproveView.as_view(),
        name="api-job-approve",
    ),
    path(
        "jobs/<int:pk>/panels/<int:index>/redo/",
        api.RedoView.as_view(),
        name="api-job-redo",
    ),
    path("jobs/<int:pk>/events/", api.EventsView.as_view(), name="api-job-events"),
]
