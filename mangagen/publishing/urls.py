from django.urls import path

from . import api, views

# Under /api/: the owner's publish and stop sharing.
api_urlpatterns = [
    path(
        "storyboards/<int:pk>/publish/",
        api.PublishComicView.as_view(),
        name="api-storyboard-publish",
    ),
    path("series/<int:pk>/publish/", api.PublishSeriesView.as_view(), name="api-series-publish"),
]

# The public reader. Its page images are answered ahead of Django where the ASGI server
# runs (pages_asgi.py); `views.page` answers the same for whatever reaches Django.
urlpatterns = [
    path("read/<str:token>/", views.ReadView.as_view(), name="read"),
    path("read/<str:token>/pages/<int:number>/", views.page, name="read-page"),
    path("read/<str:token>/download/", views.DownloadView.as_view(), name="read-download"),
]
