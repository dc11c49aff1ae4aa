from django.urls import path

from . import api

urlpatterns = [
    path("series/", api.SeriesListView.as_view(), name="api-series-list"),
    path("series/<int:pk>/", api.SeriesDetailView.as_view(), name="api-series"),
    path("series/<int:pk>/chapters/", api.ChaptersView.as_view(), name="api-series-chapters"),
    path("series/<int:pk>/export/", api.SeriesExportView.as_view(), name="api-series-export"),
]
