"""Stop sharing has a bound, on the real stack (two daphne processes, both Celery workers,
beat), read signed out over real HTTP: after Stop sharing, every URL of a reading link
(the reader page, each page image in each language, the og:image, the CBZ) answers 404
within READ_REVOKE_SECONDS, however many processes had its pages in memory, with the
cache headers that bound what browsers and caches between keep
(docs/reading-links.md, "What ends a link")."""

from __future__ import annotations

import html
import json
import re
import time

import pytest
import requests

from tests.support.people import Visitor
from tests.support.reading_links import drawn_comic, og
from tests.support.stack import stack
from tests.support.waiting import wait_for

REVOKE_SECONDS = 8  # short, so the test waits little; every layer keeps a page 2 s
KEPT = f"public, max-age={REVOKE_SECONDS // 4}, s-maxage={REVOKE_SECONDS // 4}, must-revalidate"
FRENCH = {"title": "Les toits", "panels": [{"index": 1, "dialogue": ["Il est en retard."]}]}


@pytest.fixture(scope="module", name="stack")
def revocation_stack():
    env = {
        "READ_REVOKE_SECONDS": str(REVOKE_SECONDS),
        "WEB_PROCESSES": "2",  # a link in the memory of a process that did not stop it
        "RENDER_COLD_START_SECONDS": "0",
        "RENDER_SECONDS": "0.1",
    }
    with stack("reading-revocation", SPECULATION_LOOKAHEAD="0", **env) as running:
        yield running


def fresh(base_url: str, path: str, **headers) -> requests.Response:
    """One request on a connection of its own (the next may reach the other process)."""
    return requests.get(f"{base_url}{path}", headers={"Connection": "close", **headers}, timeout=60)


def addresses(base_url: str, url: str) -> tuple[list[str], str, str]:
    """The link's page images (every page in every language), its og:image and its CBZ,
    as its reader page gives them."""
    reader = fresh(base_url, url)
    assert reader.status_code == 200, reader.text[:300]
    assert reader.headers["Cache-Control"] == "no-cache"  # asked again each time it is shown
    found = re.search(
        r'<script id="comic-data" type="application/json">(.*?)</script>', reader.text
    )
    assert found
    comic = json.loads(html.unescape(found[1]))
    pages = [address for page in comic["pages"] for address in page["urls"].values()]
    og_image = html.unescape(og(reader.text, "image")).removeprefix(base_url)
    assert comic["download"]
    return pages, og_image, comic["download"]


def test_after_stop_sharing_nothing_of_the_link_is_served_past_the_bound(stack):
    base = stack.base_url
    owner, board = drawn_comic(base)
    put = owner.request("PUT", f"/api/storyboards/{board}/translations/fr/", json=FRENCH)
    assert put.status_code in (200, 201), put.text
    published = owner.post(f"/api/storyboards/{board}/publish/", {"allow_download": True})
    assert published.status_code == 201, published.text
    url = published.json()["url"]
    pages, og_image, download = addresses(base, url)
    assert len(pages) >= 2 and og_image in pages

    # Shared: each image public for a quarter of the bound (answered ahead of Django: no
    # header of its middleware), its 304, the CBZ alike; asked several times, so that
    # both processes keep the link and its pages in memory.
    etags = {}
    for address in pages:
        for _ in range(4):
            image = fresh(base, address)
            assert image.status_code == 200 and image.content[:4] == b"\x89PNG"
            assert image.headers["Cache-Control"] == KEPT
            assert "X-Frame-Options" not in image.headers and "Vary" not in image.headers
        etags[address] = image.headers["ETag"]
        assert fresh(base, address, **{"If-None-Match": etags[address]}).status_code == 304
    cbz = fresh(base, download)
    assert cbz.status_code == 200 and cbz.content[:2] == b"PK"
    assert cbz.headers["Cache-Control"] == KEPT

    assert owner.request("DELETE", f"/api/storyboards/{board}/publish/").status_code == 204
    stopped = time.monotonic()
    served_late = []

    def everything_gone() -> bool:
        asked = [(address, {}) for address in [url, *pages, download]]
        asked += [(address, {"If-None-Match": etag}) for address, etag in etags.items()]
        gone = True
        for address, headers in asked:
            started = time.monotonic()
            answer = fresh(base, address, **headers)
            if answer.status_code not in (404, 410):
                gone = False
                if started - stopped > REVOKE_SECONDS:
                    served_late.append((address, answer.status_code, started - stopped))
            else:
                assert answer.headers["Cache-Control"] == "no-store", address
        return gone

    wait_for(everything_gone, timeout=60, every=0.2, what="every URL of the link to answer 404")
    assert served_late == [], served_late

    # The reader page says so, styled, in the reader's language.
    for language, title in (
        ("en", "This comic is no longer shared"),
        ("ja", "このマンガは共有が終了しました"),
    ):
        page = Visitor(base, sign_up=False).get(url, headers={"Accept-Language": language})
        assert page.status_code == 404
        assert f"<h1>{title}</h1>" in page.text and "css/app.css" in page.text


def test_the_stack_logged_no_crash(stack):
    log = stack.log.read_text()
    assert "Traceback" not in log, log[-3000:]
