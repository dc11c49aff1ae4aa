"""Reading links' page images answered ahead of Django (publishing/pages_asgi.py and
serving.py): the same answers as the Django view, from memory, for no longer than the
revocation bound allows; what else reaches Django; the signed storage URL."""

from __future__ import annotations

import time
import uuid
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator
from django.test import Client
from prometheus_client import REGISTRY
from rest_framework.throttling import ScopedRateThrottle

from mangagen.publishing import changes, link_cache, serving
from mangagen.publishing.models import ReadingLink
from mangagen.publishing.pages_asgi import with_reading_pages
from mangagen.storyboards import services as storyboards
from tests.support import factories

pytestmark = pytest.mark.django_db

PANELS = [{"description": "Aiko waits.", "dialogue": [{"speaker": "Aiko", "text": "Late."}]}]
DJANGO = 299  # what the stand-in for Django answers: the request went past the lean path


async def _django(scope, receive, send):
    await send({"type": "http.response.start", "status": DJANGO, "headers": []})
    await send({"type": "http.response.body", "body": b""})


APP = with_reading_pages(_django)


def lean(path: str, *, method="GET", headers=(), client=("127.0.0.1", 40000), scheme="http"):
    """The ASGI application's answer: (status, headers, body)."""
    parts = urlsplit(path)
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": scheme,
        "path": parts.path,
        "raw_path": parts.path.encode(),
        "query_string": parts.query.encode(),
        "root_path": "",
        "headers": [(b"host", b"testserver"), *((k.encode(), v.encode()) for k, v in headers)],
        "client": client,
        "server": ("testserver", 80),
    }

    async def run():
        communicator = ApplicationCommunicator(APP, scope)
        await communicator.send_input({"type": "http.request", "body": b""})
        start = await communicator.receive_output(30)
        body = await communicator.receive_output(30)
        await communicator.wait(30)
        found = {k.decode(): v.decode() for k, v in start["headers"]}
        return start["status"], found, body["body"]

    return async_to_sync(run)()


@pytest.fixture
def published(person, user):
    board = factories.storyboard(user, panels=PANELS, title="Rooftops")
    factories.keep(board)
    answer = person.post(f"/api/storyboards/{board.pk}/publish/", {}, "application/json")
    assert answer.status_code == 201, answer.content
    return board, answer.json()["url"]


def test_a_page_is_the_django_views_answer_without_django(media, published):
    _, url = published
    status, headers, body = lean(f"{url}pages/1/?lang=en&v=1")
    assert status == 200 and body[:4] == b"\x89PNG"
    assert headers["content-type"] == "image/png"
    assert headers["content-length"] == str(len(body))
    assert headers["cache-control"] == "public, max-age=15, s-maxage=15, must-revalidate"
    assert "vary" not in headers and "set-cookie" not in headers
    by_django = Client().get(f"{url}pages/1/")
    assert by_django.content == body and by_django["ETag"] == headers["etag"]
    assert by_django["Cache-Control"] == headers["cache-control"]

    again = lean(f"{url}pages/1/", headers=[("if-none-match", headers["etag"])])
    assert again[0] == 304 and again[2] == b"" and again[1]["etag"] == headers["etag"]
    assert lean(f"{url}pages/1/", headers=[("if-none-match", "*")])[0] == 304
    head = lean(f"{url}pages/1/", method="HEAD")
    assert head[0] == 200 and head[2] == b"" and head[1]["content-length"] == str(len(body))

    for missing in (f"{url}pages/2/", f"{url}pages/0/", "/read/" + "x" * 32 + "/pages/1/"):
        status, headers, body = lean(missing)
        assert status == 404 and headers["cache-control"] == "no-store"
        assert body == b'{"error": "not_found", "detail": "No such page."}'


def test_the_rest_goes_to_django(published, settings):
    _, url = published
    assert lean(url)[0] == DJANGO  # the reader's page
    assert lean(f"{url}download/")[0] == DJANGO
    assert lean(f"{url}pages/1/", method="POST")[0] == DJANGO
    assert lean(f"{url}pages/1/x/")[0] == DJANGO
    # What Django turns away before any view: a Host it does not allow, plain HTTP to be
    # redirected to HTTPS.
    assert lean(f"{url}pages/1/", headers=[("host", "evil.example")])[0] == DJANGO
    settings.SECURE_SSL_REDIRECT = True
    assert lean(f"{url}pages/1/")[0] == DJANGO
    assert lean(f"{url}pages/1/", scheme="https")[0] == 200
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    assert lean(f"{url}pages/1/", headers=[("x-forwarded-proto", "https")])[0] == 200


def test_each_answer_is_counted_for_the_metrics(published):
    _, url = published

    def counted(answer: str) -> float:
        return REGISTRY.get_sample_value("mangagen_reading_pages_total", {"answer": answer})

    before = {answer: counted(answer) for answer in ("page", "not_modified", "not_found")}
    etag = lean(f"{url}pages/1/")[1]["etag"]
    lean(f"{url}pages/1/", headers=[("if-none-match", etag)])
    lean(f"{url}pages/9/")
    assert {answer: counted(answer) - before[answer] for answer in before} == {
        "page": 1,
        "not_modified": 1,
        "not_found": 1,
    }


def test_a_page_in_memory_costs_no_query(published, django_assert_num_queries):
    _, url = published
    assert lean(f"{url}pages/1/")[0] == 200
    with django_assert_num_queries(0):
        assert lean(f"{url}pages/1/")[0] == 200
    with django_assert_num_queries(1):
        assert lean("/read/" + "y" * 32 + "/pages/1/")[0] == 404  # first time: asked
    with django_assert_num_queries(0):
        assert lean("/read/" + "y" * 32 + "/pages/1/")[0] == 404  # then known


def test_stop_sharing_is_served_no_longer_from_memory(
    published, person, django_capture_on_commit_callbacks
):
    board, url = published
    assert lean(f"{url}pages/1/")[0] == 200
    with django_capture_on_commit_callbacks(execute=True):
        assert person.delete(f"/api/storyboards/{board.pk}/publish/").status_code == 204
    assert lean(f"{url}pages/1/")[0] == 404  # the process that stopped it: at once


def test_a_newer_version_in_the_address_is_read_again(published, person):
    board, url = published
    first = lean(f"{url}pages/1/?v=1")
    before = ReadingLink.objects.get()
    storyboards.update_storyboard(
        storyboard=board,
        panels=[{**PANELS[0], "dialogue": [{"speaker": "Aiko", "text": "Now!"}]}],
    )
    again = person.post(f"/api/storyboards/{board.pk}/publish/", {}, "application/json")
    assert again.status_code == 200
    # Published again by another process: this one still holds version 1 in memory.
    links = link_cache.links
    links.put(before.digest, before, read_at=time.monotonic(), epoch=links.epoch)
    assert lean(f"{url}pages/1/")[1]["etag"] == first[1]["etag"]  # no version asked: kept
    second = lean(f"{url}pages/1/?v=2")  # the reader page's addresses carry the version
    assert second[0] == 200 and second[1]["etag"] != first[1]["etag"]


def test_a_link_ended_elsewhere_is_kept_a_quarter_of_the_bound_at_most(
    published, monkeypatch, settings
):
    _, url = published
    settings.READ_REVOKE_SECONDS = 8
    assert lean(f"{url}pages/1/")[1]["cache-control"] == (
        "public, max-age=2, s-maxage=2, must-revalidate"
    )
    ReadingLink.objects.all().delete()  # by another process, its news lost
    assert lean(f"{url}pages/1/")[0] == 200  # from memory
    now = time.monotonic()
    monkeypatch.setattr(serving.time, "monotonic", lambda: now + 2)
    assert lean(f"{url}pages/1/")[0] == 404


@pytest.fixture
def redis_cache(settings):
    """The cache (and so the changes' stream) on Redis, as in production."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": settings.REDIS_URL,
            "KEY_PREFIX": f"test-{uuid.uuid4()}",
        }
    }


@pytest.mark.usefixtures("redis_cache")
def test_every_process_forgets_a_link_changed_elsewhere_at_its_next_look(published):
    board, url = published
    assert lean(f"{url}pages/1/")[0] == 200  # the first look at the changes is made
    link = ReadingLink.objects.get(storyboard=board)
    # Another process stops sharing: the row goes, and the news goes to the stream.
    ReadingLink.objects.filter(pk=link.pk).delete()
    assert lean(f"{url}pages/1/")[0] == 200  # from memory, until the next look
    client, key = changes._stream()
    client.xadd(key, {"digest": link.digest})
    changes.reader.polled_at = float("-inf")  # a second has passed
    assert lean(f"{url}pages/1/")[0] == 404


@pytest.mark.usefixtures("redis_cache")
def test_the_news_of_a_change_reaches_the_stream_at_commit(
    published, person, django_capture_on_commit_callbacks
):
    board, _ = published
    digest = ReadingLink.objects.get().digest
    client, key = changes._stream()
    with django_capture_on_commit_callbacks(execute=True):
        person.delete(f"/api/storyboards/{board.pk}/publish/")
    entries = client.xrange(key)
    assert [fields[b"digest"].decode() for _, fields in entries] == [digest]


@pytest.mark.usefixtures("frozen_clock")
def test_images_are_counted_per_address_as_the_trusted_proxy_reports_it(
    published, monkeypatch, settings
):
    _, url = published
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"read": "2/min"})
    settings.BEHIND_PROXY = False

    def asked(made_up: str, seen: str) -> int:
        headers = [("x-forwarded-for", made_up)]
        return lean(f"{url}pages/1/", headers=headers, client=(seen, 1))[0]

    assert [asked(f"10.0.0.{n}", "203.0.113.5") for n in range(3)] == [200, 200, 429]
    assert asked("10.0.0.9", "198.51.100.7") == 200
    settings.BEHIND_PROXY = True  # the proxy (127.0.0.1) appends what it saw
    proxy = "127.0.0.1"
    assert [asked(f"10.1.0.{n}, 192.0.2.1", proxy) for n in range(3)] == [200, 200, 429]
    assert asked("10.1.0.9, 192.0.2.2", proxy) == 200
    refused = lean(f"{url}pages/1/", headers=[("x-forwarded-for", "192.0.2.1")], client=(proxy, 1))
    assert refused[0] == 429 and 0 < int(refused[1]["retry-after"]) <= 60
    assert refused[1]["cache-control"] == "no-store"


@pytest.mark.parametrize("media", ["s3"], indirect=True)  # a signed URL is the bucket's
def test_with_read_from_storage_a_page_is_a_signed_url_of_the_bucket(
    media, published, settings, person, django_capture_on_commit_callbacks
):
    board, url = published
    settings.READ_FROM_STORAGE = True
    status, headers, body = lean(f"{url}pages/1/?lang=en&v=1")
    assert status == 302 and headers["cache-control"] == "no-store" and body == b""
    location = headers["location"]
    query = parse_qs(urlsplit(location).query)
    assert query["X-Amz-Expires"] == ["15"]  # a quarter of READ_REVOKE_SECONDS
    assert query["response-cache-control"] == [serving.cache_control()]
    assert lean(f"{url}pages/1/")[1]["location"] == location  # one address while it is young
    from_bucket = requests.get(location, timeout=30)
    assert from_bucket.status_code == 200 and from_bucket.content[:4] == b"\x89PNG"
    assert from_bucket.headers["Cache-Control"] == serving.cache_control()
    assert from_bucket.headers["Content-Type"] == "image/png"

    with django_capture_on_commit_callbacks(execute=True):
        assert person.delete(f"/api/storyboards/{board.pk}/publish/").status_code == 204
    assert lean(f"{url}pages/1/")[0] == 404
    # Its file is gone too (S3 answers 403 for a key that is not there, to one who may not list).
    assert requests.get(location, timeout=30).status_code in (403, 404)
