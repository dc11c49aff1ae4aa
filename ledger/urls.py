from django.urls import path

from . import api

urlpatterns = [
    path("credits/", api.CreditsView.as_view(), name="api-credits"),
    path("credits/transfers/", api.TransfersView.as_view(), name="api-credit-transfers"),
]
