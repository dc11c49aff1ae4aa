"""What a person sees when something is not there, not theirs or broken, with DEBUG off:
styled pages in the interface's language with a way back; and the Credits page where
nothing can be bought yet."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client
from django.urls import path

from mangagen import urls as site

pytestmark = pytest.mark.django_db


def _broken(request):
    raise RuntimeError("a bug")


def _forbidden(request):
    raise PermissionDenied


urlpatterns = [
    path("test-broken/", _broken),
    path("test-forbidden/", _forbidden),
    *site.urlpatterns,
]
handler400, handler403 = site.handler400, site.handler403
handler404, handler500 = site.handler404, site.handler500


@pytest.fixture
def production(settings):
    settings.DEBUG = False
    settings.ROOT_URLCONF = __name__
    return Client(raise_request_exception=False)


PAGES = {
    "404": ("/no-such-page/", {}, "Page not found", "ページが見つかりません"),
    "403": ("/test-forbidden/", {}, "Not allowed", "許可されていません"),
    "500": ("/test-broken/", {}, "Something went wrong", "問題が発生しました"),
    "400": ("/", {"HTTP_HOST": "not-ours.example"}, "Bad request", "不正なリクエストです"),
}


@pytest.mark.parametrize("status", PAGES)
@pytest.mark.parametrize("language", ["en", "ja"])
def test_error_pages_are_styled_translated_and_lead_back(production, status, language):
    url, extra, english, japanese = PAGES[status]
    response = production.get(url, HTTP_ACCEPT_LANGUAGE=language, **extra)
    page = response.content.decode()
    assert response.status_code == int(status)
    assert f'data-status="{status}"' in page
    assert f'<html lang="{language}">' in page
    assert (english if language == "en" else japanese) in page
    assert 'id="way-back" href="/"' in page
    assert "/static/css/app.css" in page
    assert "Traceback" not in page and "a bug" not in page


def test_a_refused_form_says_what_to_do(production, user):
    browser = Client(enforce_csrf_checks=True)
    response = browser.post("/accounts/login/", {"username": "x", "password": "y"})
    page = response.content.decode()
    assert response.status_code == 403
    assert 'data-status="403"' in page and "reload the page and try again" in page


def test_credits_without_payments_say_to_ask_the_operator_not_about_keys(client, person, settings):
    settings.STRIPE_SECRET_KEY = ""
    settings.DEMO_MODE = False  # a real site: no demo credits either
    page = client.get("/credits/").content.decode()
    assert "Buying credits is not available on this site yet" in page
    assert "ask the people who run this site" in page
    assert "Stripe" not in page
    settings.STRIPE_SECRET_KEY = "sk_test_x"
    assert "not available on this site" not in client.get("/credits/").content.decode()
