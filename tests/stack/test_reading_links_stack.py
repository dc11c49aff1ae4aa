"""Reading links on the real stack (daphne, both Celery workers and beat), read signed out
over real HTTP: the reader's preview tags, a public page image with its ETag and 304, an
edit that shows only once published again (on the same link), the refusals, and a link
that answers 404 once its owner stops sharing (docs/api.md, "Reading links")."""

from __future__ import annotations

import pytest

from tests.support.people import Visitor
from tests.support.reading_links import PANELS, drawn_comic, og
from tests.support.stack import ROOT, stack


@pytest.fixture(scope="module", name="stack")
def reading_stack():
    env = {"RENDER_COLD_START_SECONDS": "0", "RENDER_SECONDS": "0.1"}
    log = ROOT / "artifacts" / "reading-links-stack.log"
    with stack("reading-links", log=log, **env) as running:
        yield running


def test_a_link_reads_signed_out_and_shows_only_what_was_published(stack):
    owner, board = drawn_comic(stack.base_url)
    published = owner.post(f"/api/storyboards/{board}/publish/")
    assert published.status_code == 201, published.text
    url = published.json()["url"]
    reader = Visitor(stack.base_url, sign_up=False)

    # The reader, with its preview tags, to someone signed out.
    page = reader.get(url)
    assert page.status_code == 200
    assert og(page.text, "title") == "Rooftops"
    assert og(page.text, "image").startswith(f"{stack.base_url}{url}pages/1/")
    assert og(page.text, "description")
    assert '<meta name="robots" content="noindex">' in page.text
    assert owner.username not in page.text

    # A page image: public, with a strong ETag, and a 304 for it.
    image = reader.get(f"{url}pages/1/")
    assert image.status_code == 200 and image.content[:4] == b"\x89PNG"
    assert image.headers["Cache-Control"].startswith("public, max-age=")
    etag = image.headers["ETag"]
    assert etag.startswith('"') and not etag.startswith("W/")
    again = reader.get(f"{url}pages/1/", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.headers["ETag"] == etag

    # An edit shows only once published again, then on the same link.
    edited = [{**PANELS[0], "dialogue": [{"speaker": "Aiko", "text": "Finally!"}]}, PANELS[1]]
    patch = owner.request(
        "PATCH", f"/api/storyboards/{board}/", json={"title": "Rooftops at dusk", "panels": edited}
    )
    assert patch.status_code == 200, patch.text
    assert reader.get(f"{url}pages/1/").headers["ETag"] == etag
    assert og(reader.get(url).text, "title") == "Rooftops"
    republished = owner.post(f"/api/storyboards/{board}/publish/")
    assert republished.status_code == 200, republished.text
    assert republished.json()["url"] == url and republished.json()["version"] == 2
    assert og(reader.get(url).text, "title") == "Rooftops at dusk"
    changed = reader.get(f"{url}pages/1/", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["ETag"] != etag

    # Refused: a made-up token, a stranger publishing the comic, the private URLs and the
    # storyboard's JSON.
    token = url.split("/")[2]
    for guess in (token[:-2] + "zz" if not token.endswith("zz") else token[:-2] + "yy", "x" * 32):
        assert reader.get(f"/read/{guess}/").status_code == 404
        assert reader.get(f"/read/{guess}/pages/1/").status_code == 404
    stranger = Visitor(stack.base_url)
    assert stranger.post(f"/api/storyboards/{board}/publish/").status_code == 404
    assert stranger.request("DELETE", f"/api/storyboards/{board}/publish/").status_code == 404
    assert reader.post(f"/api/storyboards/{board}/publish/").status_code == 403
    private_page = owner.get(f"/api/storyboards/{board}/pages/").json()["pages"][0]["image_url"]
    take = owner.get(f"/api/storyboards/{board}/panels/1/takes/").json()["takes"][0]["image_url"]
    for private in (private_page, take):
        assert owner.get(private).status_code == 200
        assert stranger.get(private).status_code == 404
        refused = reader.get(private, allow_redirects=False)
        assert refused.status_code in (302, 404) and refused.content[:4] != b"\x89PNG"
    assert reader.get(f"/api/storyboards/{board}/").status_code == 403
    assert stranger.get(f"/api/storyboards/{board}/").status_code == 404
    assert reader.get(url).status_code == 200  # still shared

    # Stop sharing: the link and its pages answer 404 at once.
    assert owner.request("DELETE", f"/api/storyboards/{board}/publish/").status_code == 204
    assert reader.get(url).status_code == 404
    assert reader.get(f"{url}pages/1/").status_code == 404
    assert reader.get(f"{url}pages/1/", headers={"If-None-Match": etag}).status_code == 404


def test_the_stack_logged_no_crash(stack):
    log = stack.log.read_text()
    assert "Traceback" not in log, log[-3000:]
