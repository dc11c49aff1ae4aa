from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, register_converter
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from mangagen.api.credits import PublicTransfersView
from mangagen.api.me import MeView
from mangagen.api.unrouted import SlashedPath, unrouted
from mangagen.observability.exposition import metrics_view
from mangagen.pages.api import page_image
from mangagen.payments import api as payments
from mangagen.publishing import urls as publishing
from mangagen.views import accounts, credits, interface_languages, studio, translations
from mangagen.views import series as series_pages
from mangagen.views.csp_report import csp_report
from mangagen.views.error_pages import bad_request, page_not_found, permission_denied, server_error
from mangagen.views.images import (
    library_image,
    place_image,
    render_image,
    rough_image,
    sheet_image,
)

register_converter(SlashedPath, "slashed")

urlpatterns = [
    path("", studio.dashboard, name="home"),
    path("comics/new/", studio.new_comic, name="comic-new"),
    path("comics/<int:pk>/jobs/<int:job_pk>/", studio.job_page, name="comic-job"),
    path("comics/<int:pk>/jobs/<int:job_pk>/read/", studio.reader, name="comic-reader"),
    path(
        "comics/<int:pk>/jobs/<int:job_pk>/comic.<str:fmt>",
        studio.download,
        name="comic-download",
    ),
    path("comics/<int:pk>/read/", studio.read_comic, name="comic-read"),
    path(
        "comics/<int:pk>/translations/", translations.translations_page, name="comic-translations"
    ),
    path("comics/<int:pk>/pages/<str:key>/<str:name>", page_image, name="page-image"),
    path("comics/<int:pk>/<slug:step>/", studio.wizard_step, name="comic-step"),
    path("series/new/", series_pages.new_series, name="series-new"),
    path("series/<int:pk>/", series_pages.series_page, name="series"),
    path("series/<int:pk>/chapters/new/", series_pages.next_chapter, name="series-next-chapter"),
    path("", include(publishing.urlpatterns)),
    path("credits/", credits.credits_page, name="credits"),
    path("credits/demo/", credits.demo_credits, name="credits-demo"),
    path("media/renders/<path:path>", render_image, name="render-image"),
    path("media/sheets/<path:path>", sheet_image, name="sheet-image"),
    path("media/places/<path:path>", place_image, name="place-image"),
    path("media/library/<path:path>", library_image, name="library-image"),
    path("media/roughs/<path:path>", rough_image, name="rough-image"),
    path("accounts/login/", accounts.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/signup/", accounts.SignupView.as_view(), name="signup"),
    # The interface's language: set_language (the switcher, which keeps it in a cookie) and
    # the scripts' catalog. URLs carry no language prefix: the API's paths are fixed.
    path("i18n/", include("django.conf.urls.i18n")),
    path("jsi18n/<str:lang>/", interface_languages.javascript_catalog, name="javascript-catalog"),
    path("admin/", admin.site.urls),
    path("api/me/", MeView.as_view(), name="api-me"),
    # Ahead of ledger.urls: people's history without operators' names and notes.
    path(
        "api/credits/transfers/",
        PublicTransfersView.as_view(),
        name="api-credit-transfers-public",
    ),
    path("api/", include("ledger.urls")),
    path("api/", include("mangagen.storyboards.urls")),
    path("api/", include("mangagen.characters.urls")),
    path("api/", include("mangagen.places.urls")),
    path("api/", include("mangagen.series.urls")),
    path("api/", include("mangagen.library.urls")),
    path("api/", include("mangagen.translations.urls")),
    path("api/", include(publishing.api_urlpatterns)),
    path("api/", include("mangagen.jobs.urls")),
    path("api/", include("mangagen.roughs.urls")),
    path("api/", include("speculation.urls")),
    path("api/credits/packs/", payments.PacksView.as_view(), name="api-credit-packs"),
    path("api/credits/checkout/", payments.CheckoutView.as_view(), name="api-credit-checkout"),
    path("stripe/webhook/", payments.stripe_webhook, name="stripe-webhook"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view: its script is a file of its own, as the Content-Security-Policy asks.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("metrics", metrics_view, name="metrics"),
    # What a browser's Content-Security-Policy blocked (settings/security.py), logged.
    path("csp-report/", csp_report, name="csp-report"),
    # Last: every other /api/…/ answers the API's 404, not an HTML page.
    path("api/<slashed:rest>", unrouted, name="api-unrouted"),
]

# What a person sees with DEBUG off (mangagen/views/error_pages.py).
handler400 = bad_request
handler403 = permission_denied
handler404 = page_not_found
handler500 = server_error
