"""Reading links (docs/api.md, "Reading links"): publishing a comic or a series, the public
reader signed out, its page images, and everything the link must not reach."""

from __future__ import annotations

import io
import re
import uuid

import pytest
from django.test import Client
from PIL import Image
from rest_framework.throttling import ScopedRateThrottle

from mangagen.orchestration import comic_deletion as deletion
from mangagen.publishing import selectors, services
from mangagen.publishing.models import ReadingLink
from mangagen.storyboards import services as storyboards
from mangagen.storyboards.models import Storyboard
from mangagen.translations import services as translations
from tests.support import factories
from tests.support.series import chapter, new_series

pytestmark = pytest.mark.django_db

PANELS = [
    {"description": "Aiko waits.", "dialogue": [{"speaker": "Aiko", "text": "He is late."}]},
    {"description": "Kenji runs.", "caption": "Later."},
]


def publish(person, board, body=None, *, what="storyboards"):
    return person.post(f"/api/{what}/{board}/publish/", body or {}, content_type="application/json")


def stranger() -> Client:
    return Client()


def drawn(user, **extra) -> Storyboard:
    board = factories.storyboard(user, panels=PANELS, **extra)
    factories.keep(board)
    return board


def token_of(url: str) -> str:
    match = re.fullmatch(r"/read/([A-Za-z0-9_-]+)/", url)
    assert match, url
    return match[1]


def page(client, url: str, number: int = 1, **headers):
    return client.get(f"{url}pages/{number}/", headers=headers)


def test_a_published_comic_reads_signed_out_with_its_preview_tags_and_public_pages(
    media, person, user
):
    board = drawn(user, title="Rooftops")
    answer = publish(person, board.pk)
    assert answer.status_code == 201, answer.content
    link = answer.json()
    assert link["version"] == 1 and link["published_at"]
    url = link["url"]
    assert len(token_of(url)) >= 22  # 128 random bits in base64url

    reader = stranger().get(url)
    assert reader.status_code == 200
    html = reader.content.decode()
    assert '<meta property="og:title" content="Rooftops">' in html
    assert f'<meta property="og:image" content="http://testserver{url}pages/1/' in html
    assert 'property="og:description"' in html
    assert '<meta name="robots" content="noindex">' in html
    assert reader["X-Robots-Tag"] == "noindex"
    assert 'rel="alternate"' not in html  # no download unless allowed
    assert user.username not in html  # no author's name without a pen name
    assert f"/api/storyboards/{board.pk}" not in html and "/comics/" not in html

    image = page(stranger(), url)
    assert image.status_code == 200 and image.content[:4] == b"\x89PNG"
    assert image["Content-Type"] == "image/png"
    assert image["Cache-Control"].startswith("public, max-age=")
    assert "Cookie" not in image.get("Vary", "")  # one copy in a shared cache for everyone
    etag = image["ETag"]
    assert re.fullmatch(r'"[0-9a-f]{40}"', etag)  # strong
    again = page(stranger(), url, If_None_Match=etag)
    assert again.status_code == 304 and again["ETag"] == etag and not again.content
    pages = ReadingLink.objects.get().manifest["pages"]
    assert page(stranger(), url, len(pages) + 1).status_code == 404
    assert page(stranger(), url, 0).status_code == 404
    assert any(name.startswith("published/") for name in media.names())


def test_a_reader_never_draws_a_page(person, user, monkeypatch):
    board = drawn(user)
    url = publish(person, board.pk).json()["url"]

    def no_drawing(*args, **kwargs):
        raise AssertionError("a reader's request drew a page")

    monkeypatch.setattr("mangagen.pages.builds.built", no_drawing)
    monkeypatch.setattr("mangagen.pages.builds.comic_of", no_drawing)
    assert stranger().get(url).status_code == 200
    assert page(stranger(), url).status_code == 200


def test_nothing_is_published_until_a_panel_is_kept(person, user):
    board = factories.storyboard(user, panels=PANELS)
    answer = publish(person, board.pk)
    assert answer.status_code == 409 and answer.json()["error"] == "nothing_to_export"
    assert not ReadingLink.objects.exists()


def test_an_edit_shows_on_the_same_link_only_once_published_again(person, user):
    board = drawn(user, title="Rooftops")
    url = publish(person, board.pk).json()["url"]
    before = page(stranger(), url)

    storyboards.update_storyboard(
        storyboard=board,
        title="Rooftops at night",
        panels=[{**PANELS[0], "dialogue": [{"speaker": "Aiko", "text": "Finally."}]}, PANELS[1]],
    )
    unchanged = page(stranger(), url)
    assert unchanged["ETag"] == before["ETag"] and unchanged.content == before.content
    assert "Rooftops at night" not in stranger().get(url).content.decode()

    again = publish(person, board.pk)
    assert again.status_code == 200
    assert again.json()["url"] == url and again.json()["version"] == 2
    after = page(stranger(), url)
    assert after.status_code == 200 and after["ETag"] != before["ETag"]
    assert page(stranger(), url, If_None_Match=before["ETag"]).status_code == 200
    assert (
        '<meta property="og:title" content="Rooftops at night">'
        in stranger().get(url).content.decode()
    )


def test_made_up_tokens_strangers_and_private_urls_are_refused(person, user, make_user):
    board = drawn(user)
    url = publish(person, board.pk).json()["url"]
    token = token_of(url)
    for guess in (
        "x" * len(token),
        token[:-1] + ("A" if token[-1] != "A" else "B"),
        token[:-1],
        "a",
    ):
        refused = stranger().get(f"/read/{guess}/")
        assert refused.status_code == 404 and refused["Content-Type"].startswith("text/html")
        assert stranger().get(f"/read/{guess}/pages/1/").status_code == 404
    assert selectors.link_for_token(token[:-1]) is None

    other = Client()
    other.force_login(make_user("kenji"))
    assert publish(other, board.pk).status_code == 404
    assert other.delete(f"/api/storyboards/{board.pk}/publish/").status_code == 404
    assert ReadingLink.objects.get().version == 1
    assert stranger().get(url).status_code == 200  # still shared

    private = person.get(f"/api/storyboards/{board.pk}/pages/").json()["pages"][0]["image_url"]
    assert stranger().get(private).status_code == 404
    assert other.get(private).status_code == 404
    assert stranger().get(f"/api/storyboards/{board.pk}/").status_code in (401, 403, 404)
    assert other.get(f"/api/storyboards/{board.pk}/").status_code == 404
    assert publish(stranger(), board.pk).status_code in (401, 403)


def test_stop_sharing_and_deleting_the_comic_end_the_link_at_once(
    media, person, user, django_capture_on_commit_callbacks
):
    board = drawn(user)
    url = publish(person, board.pk).json()["url"]
    with django_capture_on_commit_callbacks(execute=True):
        assert person.delete(f"/api/storyboards/{board.pk}/publish/").status_code == 204
    assert stranger().get(url).status_code == 404
    assert page(stranger(), url).status_code == 404
    assert not [n for n in media.names() if n.startswith("published/")]
    assert person.get(f"/api/storyboards/{board.pk}/publish/").json() == {"link": None}

    fresh = publish(person, board.pk).json()["url"]
    assert fresh != url  # a link once ended stays ended
    with django_capture_on_commit_callbacks(execute=True):
        deletion.delete_comic(storyboard=board)
    assert stranger().get(fresh).status_code == 404
    assert not ReadingLink.objects.exists()
    assert not [n for n in media.names() if n.startswith("published/")]


def test_the_owner_chooses_downloads_indexing_and_a_pen_name(person, user):
    board = drawn(user)
    url = publish(
        person, board.pk, {"allow_download": True, "indexable": True, "pen_name": "Mori"}
    ).json()["url"]
    html = stranger().get(url).content.decode()
    assert (
        f'<link rel="alternate" type="application/vnd.comicbook+zip" href="{url}download/"' in html
    )
    assert 'name="robots"' not in html and "By Mori" in html
    cbz = stranger().get(f"{url}download/")
    assert cbz.status_code == 200 and cbz.content[:2] == b"PK"
    assert cbz["Cache-Control"].startswith("public")
    assert cbz["Content-Disposition"] == 'attachment; filename="rooftops.cbz"'

    publish(person, board.pk, {"allow_download": False})  # the others are kept
    html = stranger().get(url).content.decode()
    assert 'rel="alternate"' not in html and "By Mori" in html
    assert stranger().get(f"{url}download/").status_code == 404


@pytest.fixture(params=["local memory", "redis"])
def throttle_cache(request, settings):
    """The cache the throttle counts in: the tests' own, and Redis (production's)."""
    if request.param == "redis":
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": settings.REDIS_URL,
                "KEY_PREFIX": f"test-{uuid.uuid4()}",
            }
        }


@pytest.mark.usefixtures("throttle_cache", "frozen_clock")
def test_reading_is_throttled_per_address(person, user, monkeypatch):
    """The reader's page is counted per address in the cache (every process's count);
    its images per address in the process that answers them (no round trip each)."""
    board = drawn(user)
    url = publish(person, board.pk).json()["url"]
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"read": "2/min"})
    reader = stranger()
    for ask in (lambda client: client.get(url), lambda client: page(client, url)):
        assert ask(reader).status_code == 200
        assert ask(reader).status_code == 200
        refused = ask(reader)
        assert refused.status_code == 429 and refused.json()["error"] == "throttled"
        assert 0 < int(refused["Retry-After"]) <= 60
        assert refused["Cache-Control"] == "no-store"
        assert ask(person).status_code == 429  # the same address, signed in or not
        assert ask(Client(REMOTE_ADDR="10.0.0.9")).status_code == 200  # another address


@pytest.mark.usefixtures("throttle_cache", "frozen_clock")
@pytest.mark.parametrize("behind_proxy", [False, True])
def test_an_x_forwarded_for_the_caller_sets_moves_no_count(
    person, user, monkeypatch, settings, behind_proxy
):
    """THROTTLE_READ counts the address a trusted proxy reports: with BEHIND_PROXY, the
    hop it appends (the last); without, the connection's. Whatever else the caller puts
    in X-Forwarded-For is not counted: a rotating header buys no more reads."""
    settings.BEHIND_PROXY = behind_proxy
    board = drawn(user)
    url = publish(person, board.pk).json()["url"]
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"read": "2/min"})

    def caller(made_up: int, seen: str = "203.0.113.5") -> Client:
        if behind_proxy:  # the proxy (127.0.0.1) appends the address it saw
            return Client(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR=f"10.9.{made_up}.1, {seen}")
        return Client(REMOTE_ADDR=seen, HTTP_X_FORWARDED_FOR=f"10.9.{made_up}.1")

    for ask in (lambda client: client.get(url), lambda client: page(client, url)):
        assert ask(caller(1)).status_code == 200
        assert ask(caller(2)).status_code == 200
        assert ask(caller(3)).status_code == 429  # a third made-up address: the same count
        # Another address, as the trusted hop reports it (or as it connects): its own count.
        assert ask(caller(3, seen="198.51.100.7")).status_code == 200
    if behind_proxy:  # a proxy in front reports the addresses: it is not counted itself
        assert page(Client(REMOTE_ADDR="127.0.0.1"), url).status_code == 200


@pytest.mark.parametrize("language", ["en", "ja"])
def test_a_link_no_longer_shared_says_so_in_the_interface_language(
    person, user, language, django_capture_on_commit_callbacks
):
    board = drawn(user)
    url = publish(person, board.pk).json()["url"]
    with django_capture_on_commit_callbacks(execute=True):
        assert person.delete(f"/api/storyboards/{board.pk}/publish/").status_code == 204
    for reader_url in (url, "/read/" + "x" * 32 + "/"):  # stopped, and never made
        gone = Client(HTTP_ACCEPT_LANGUAGE=language).get(reader_url)
        assert gone.status_code == 404 and gone["Content-Type"].startswith("text/html")
        assert gone["Cache-Control"] == "no-store"
        html = gone.content.decode()
        assert f'<html lang="{language}">' in html
        assert "css/app.css" in html  # the site's own style
        title = {"en": "This comic is no longer shared", "ja": "このマンガは共有が終了しました"}
        assert f"<h1>{title[language]}</h1>" in html
        assert '<meta name="robots" content="noindex">' in html


def test_a_series_reads_in_order_across_chapters_in_each_language(
    media, person, user, django_capture_on_commit_callbacks
):
    made = new_series(person)
    one = Storyboard.objects.get(pk=chapter(person, made["id"], title="One")["id"])
    two = Storyboard.objects.get(pk=chapter(person, made["id"], title="Two")["id"])
    three = Storyboard.objects.get(pk=chapter(person, made["id"], title="Three")["id"])
    for board in (one, two, three):
        storyboards.update_storyboard(storyboard=board, panels=PANELS)
    factories.keep(one)
    factories.keep(two)  # three: nothing drawn, left out
    translations.save_translation(storyboard=two, language="fr", title=None)

    answer = publish(person, made["id"], what="series")
    assert answer.status_code == 201, answer.content
    url = answer.json()["url"]
    link = ReadingLink.objects.get()
    chapters = link.manifest["chapters"]
    assert [c["storyboard"] for c in chapters] == [one.pk, two.pk]
    assert [lang["code"] for lang in link.manifest["languages"]] == [one.language, "fr"]
    count = len(link.manifest["pages"])
    last = chapters[1]["first"]
    assert count == chapters[0]["count"] + chapters[1]["count"] and last > 1

    reader = stranger().get(f"{url}?lang=fr")
    assert reader.status_code == 200
    assert '<option value="fr" selected>' in reader.content.decode()
    # Chapter one has no French: its pages are its original's; chapter two's are French.
    assert page(stranger(), f"{url}", 1, lang="fr").content == page(stranger(), url, 1).content
    original, french = (
        stranger().get(f"{url}pages/{last}/?lang={code}") for code in (one.language, "fr")
    )
    assert original.status_code == french.status_code == 200
    assert page(stranger(), url, count + 1).status_code == 404

    # Deleting a chapter the snapshot holds ends the series' link.
    with django_capture_on_commit_callbacks(execute=True):
        deletion.delete_comic(storyboard=two)
    assert stranger().get(url).status_code == 404
    assert not [n for n in media.names() if n.startswith("published/")]


def test_deleting_a_series_ends_its_link(person, user):
    made = new_series(person)
    board = Storyboard.objects.get(pk=chapter(person, made["id"])["id"])
    storyboards.update_storyboard(storyboard=board, panels=PANELS)
    factories.keep(board)
    url = publish(person, made["id"], what="series").json()["url"]
    assert stranger().get(url).status_code == 200
    assert person.delete(f"/api/series/{made['id']}/").status_code == 204
    assert stranger().get(url).status_code == 404


def test_publishing_again_at_once_keeps_one_link(person, user):
    board = drawn(user)
    first, _ = services.publish_comic(storyboard=board)
    second, created = services.publish_comic(storyboard=board)
    assert not created and second.pk == first.pk and second.token == first.token
    assert second.version == 2 and ReadingLink.objects.count() == 1


def test_a_webtoon_comic_reads_as_its_strip(person, user):
    board = drawn(user)
    storyboards.update_storyboard(storyboard=board, layout={"format": "webtoon"})
    url = publish(person, board.pk).json()["url"]
    link = ReadingLink.objects.get()
    assert link.manifest["chapters"][0]["format"] == "webtoon"
    assert len(link.manifest["pages"]) == 1  # the whole strip, one image
    strip = page(stranger(), url)
    assert strip.status_code == 200
    with Image.open(io.BytesIO(strip.content)) as image:
        assert image.height > 2 * image.width  # one tall strip of both panels
    assert '"format": "webtoon"' in stranger().get(url).content.decode()
