"""The interface in Japanese: Accept-Language or the switcher's cookie picks it, every page
says so in <html lang> and shows no English the catalog translates, and what the API and the
forms tell a person follows too (the error codes do not)."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client, override_settings
from django.utils import timezone

from ledger import services as ledger
from mangagen.jobs import services as jobs
from mangagen.series import services as series_services
from tests.support import factories
from tests.support.interface import english_left, shown_text

pytestmark = pytest.mark.django_db

JA = {"HTTP_ACCEPT_LANGUAGE": "ja-JP,ja;q=0.9,en;q=0.5"}
# Data a person wrote stays as written: give it in Japanese, so any English on a page is ours.
PANELS = [
    {
        "description": "雨の屋上。",
        "characters": ["アイコ"],
        "dialogue": [{"speaker": "アイコ", "text": "来た！"}],
    },
    {"description": "跳ぶ。"},
]


def lang_of(html: str) -> str:
    return re.search(r'<html lang="([^"]+)"', html).group(1)


@pytest.fixture
def comic(user, enqueued):
    """A person with credits, a series with a chapter, and a comic with a confirmed job."""
    factories.funded_account(user, 5)
    board = factories.storyboard(
        user, title="屋上", characters=[{"name": "アイコ", "description": "黒髪"}], panels=PANELS
    )
    job = jobs.start_job(user=user, storyboard=board, confirmed=True, confirm_by=timezone.now())
    series = series_services.create_series(owner=user, title="ネオ京都")
    series_services.start_chapter(series=series, story="アイコは走った。")
    return {"board": board, "job": job, "series": series}


def pages_of(comic) -> list[str]:
    board, job, series = comic["board"].pk, comic["job"].pk, comic["series"].pk
    return [
        "/",
        "/comics/new/",
        *(f"/comics/{board}/{step}/" for step in ("story", "characters", "storyboard", "review")),
        f"/comics/{board}/jobs/{job}/",
        f"/comics/{board}/read/",
        f"/comics/{board}/translations/",
        "/series/new/",
        f"/series/{series}/",
        "/credits/",
    ]


def test_every_page_is_in_japanese_for_a_japanese_browser(client, user, comic):
    client.force_login(user)
    left = {}
    for path in pages_of(comic):
        page = client.get(path, **JA)
        assert page.status_code == 200, path
        html = page.content.decode()
        assert lang_of(html) == "ja", path
        assert page["Content-Language"] == "ja"
        found = english_left(shown_text(html))
        if found:
            left[path] = found
    assert left == {}
    dashboard = client.get("/", **JA).content.decode()
    assert "あなたのマンガ" in dashboard and "＋ 新しいマンガ" in dashboard


@pytest.mark.parametrize("path", ["/accounts/login/", "/accounts/signup/"])
def test_signing_in_and_up_are_in_japanese(client, path):
    html = client.get(path, **JA).content.decode()
    assert lang_of(html) == "ja"
    assert english_left(shown_text(html)) == []
    assert "ログイン" in html


def test_english_stays_the_default(client, user, comic):
    client.force_login(user)
    for path in pages_of(comic)[:3]:
        html = client.get(path).content.decode()
        assert lang_of(html) == "en"
    english = client.get("/", HTTP_ACCEPT_LANGUAGE="fr,de").content.decode()
    assert "Your comics" in english
    assert "Comics and chapters" in english_left(shown_text(english))  # the check finds English


def test_the_switcher_keeps_the_choice_and_returns_to_the_same_page(user):
    browser = Client(HTTP_ACCEPT_LANGUAGE="en")  # an English browser that picks Japanese
    browser.force_login(user)
    html = browser.get("/credits/?page=1").content.decode()
    assert 'name="next" value="/credits/?page=1"' in html
    answer = browser.post("/i18n/setlang/", {"language": "ja", "next": "/credits/?page=1"})
    assert answer.status_code == 302 and answer["Location"] == "/credits/?page=1"
    cookie = answer.cookies["django_language"]
    assert cookie.value == "ja" and int(cookie["max-age"]) >= 365 * 24 * 3600
    assert cookie["httponly"] and cookie["samesite"] == "Lax"
    for path in ("/credits/", "/", "/series/new/"):
        assert lang_of(browser.get(path).content.decode()) == "ja", path
    browser.post("/i18n/setlang/", {"language": "en", "next": "/"})
    assert lang_of(browser.get("/").content.decode()) == "en"


def test_the_switcher_refuses_an_address_elsewhere(client):
    answer = client.post("/i18n/setlang/", {"language": "ja", "next": "https://example.com/"})
    assert answer.status_code == 302 and answer["Location"] == "/"


def test_the_scripts_catalog_is_the_languages_and_cached_by_its_address(client):
    page = client.get("/accounts/login/", **JA).content.decode()
    address = re.search(r'<script[^>]* src="(/jsi18n/ja/\?v=\w+)">', page).group(1)
    answer = client.get(address, HTTP_ACCEPT_LANGUAGE="en")  # the address says which
    body = answer.content.decode()
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/javascript")
    saved = json.dumps("保存しました")  # "Saved", from djangojs.po (the catalog escapes it)
    assert saved in body
    assert "immutable" in answer["Cache-Control"] and answer["Content-Language"] == "ja"
    english = client.get("/jsi18n/en/").content.decode()
    assert saved not in english and '"Saved"' not in english
    assert client.get("/jsi18n/xx/").status_code == 404


def test_an_api_error_speaks_the_persons_language_and_keeps_its_code(client, user):
    client.force_login(user)
    board = factories.storyboard(user)
    answer = client.get(f"/api/storyboards/{board.pk}/export/?format=pdf", **JA)
    assert answer.status_code == 409
    assert answer.json() == {
        "error": "nothing_to_export",
        "detail": "まだ何も描かれていません。まず 1 コマ以上生成してください。",
    }
    english = client.get(f"/api/storyboards/{board.pk}/export/?format=pdf").json()
    assert english["detail"] == "Nothing is drawn yet: generate at least one panel first."


def test_refusals_raised_from_the_areas_error_classes_speak_japanese(client, user, comic):
    """A refusal raised through its area's error class (a service's, a view's, the 404 for an
    API address no route serves) keeps its code and tells a Japanese browser why in Japanese."""
    client.force_login(user)
    board, job = comic["board"].pk, comic["job"].pk  # the comic's story is empty
    asked = {
        f"/api/storyboards/{board}/draft/": (
            400,
            "empty_story",
            "先にストーリーを書いてください。コマはストーリーから下書きされます。",
        ),
        f"/api/storyboards/{board}/speculate/leave/": (400, "invalid", "トークンが必要です。"),
        "/api/no-such-thing/": (404, "not_found", "見つかりませんでした。"),
    }
    for path, (status, code, detail) in asked.items():
        answer = client.post(path, {}, content_type="application/json", **JA)
        assert (answer.status_code, answer.json()) == (status, {"error": code, "detail": detail})
    events = client.get(f"/api/jobs/{job}/events/?after=x", **JA)
    assert events.json() == {"error": "invalid", "detail": "after は整数で指定してください。"}
    pack = client.post("/api/credits/checkout/", {"pack": "?"}, "application/json", **JA)
    assert pack.status_code == 400 and pack.json()["error"] == "invalid"
    assert pack.json()["detail"].endswith("のどれかを選んでください。")
    english = client.post("/api/no-such-thing/", {}, content_type="application/json")
    assert english.json()["detail"] == "Not found."


def test_an_unknown_download_format_is_refused_in_japanese(client, user, comic):
    client.force_login(user)
    downloads = {
        f"/api/storyboards/{comic['board'].pk}/export/": "pdf, cbz, webtoon",
        f"/api/series/{comic['series'].pk}/export/": "pdf, cbz",
    }
    for path, formats in downloads.items():
        answer = client.get(f"{path}?format=gif", **JA)
        assert (answer.status_code, answer.json()) == (
            400,
            {"error": "invalid", "detail": f"format は {formats} のどれかを指定してください。"},
        )
        english = client.get(f"{path}?format=gif").json()["detail"]
        assert english == f"format must be one of {formats}."


def test_out_of_credits_is_said_in_japanese(client, user):
    client.force_login(user)
    board = factories.storyboard(user)
    answer = client.post(f"/api/storyboards/{board.pk}/generate/", {}, **JA)
    assert answer.status_code == 402
    assert answer.json()["error"] == "insufficient_credits"
    assert answer.json()["detail"].startswith("コマを描くには 1 クレジットが必要です")


@override_settings(LOGIN_FAILURES_PER_USERNAME=1)
def test_a_locked_out_sign_in_is_told_in_japanese(client, user):
    for _ in range(2):
        answer = client.post("/accounts/login/", {"username": user.username, "password": "x"}, **JA)
    assert answer.status_code == 429
    assert "ログインの失敗が続いたため" in answer.content.decode()


@override_settings(SIGNUP_PER_ADDRESS_PER_HOUR=0)
def test_a_throttled_sign_up_is_told_in_japanese(client):
    answer = client.post("/accounts/signup/", {"username": "x"}, **JA)
    assert answer.status_code == 429
    assert "お使いのネットワークからの登録が多すぎます" in answer.content.decode()


def test_the_credit_history_says_what_happened_in_japanese(client, user):
    account = ledger.account_for(user)
    ledger.grant(account=account, amount=5, key="buy", reason="Purchase of the S pack")
    ledger.grant(account=account, amount=1, key="hand", reason="admin alice: sorry")
    client.force_login(user)
    text = shown_text(client.get("/credits/", **JA).content.decode())
    assert "S パックの購入" in text and "サポートチームによるクレジット追加" in text
    assert "alice" not in text and english_left(text) == []
    assert "Purchase of the S pack" in client.get("/credits/").content.decode()
