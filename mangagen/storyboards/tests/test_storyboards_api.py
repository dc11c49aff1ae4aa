"""The storyboard endpoints of docs/api.md, hashes and versions, limits, ownership."""

import pytest

from mangagen.storyboards.models import Storyboard

pytestmark = pytest.mark.django_db

STORY = """The rain had not stopped for three days. Neo-Kyoto glittered under it.

Aiko ran across the rooftop, her red scarf snapping. "They're right behind us!" she shouted.

Kenji caught her hand at the edge. "Then we jump," he said."""

CAST = [
    {"name": "Aiko", "description": "long black hair, red scarf"},
    {"name": "Kenji", "description": "spiky hair, glasses"},
]


def panel(description="A rooftop at night.", **extra):
    return {
        "description": description,
        "shot": "wide",
        "characters": [],
        "dialogue": [],
        "caption": "",
    } | extra


@pytest.fixture
def api(client, user):
    client.force_login(user)

    class Api:
        def post(self, url, data=None):
            return client.post(url, data or {}, content_type="application/json")

        def patch(self, url, data):
            return client.patch(url, data, content_type="application/json")

        def get(self, url):
            return client.get(url)

        def delete(self, url):
            return client.delete(url)

    return Api()


@pytest.fixture
def created(api):
    created = api.post("/api/storyboards/", {"title": "Rooftops", "story": STORY})
    assert created.status_code == 201
    return created.json()


def test_create_returns_the_contract_shape(created):
    assert set(created) >= {
        "id",
        "title",
        "story",
        "style",
        "characters",
        "panels",
        "version",
        "complete",
    }
    assert created["style"] == "manga"
    assert created["panels"] == [] and created["complete"] is False
    assert created["suggested_characters"] == ["Aiko", "Kenji"]


def test_list_and_get_are_your_own(api, created, client, make_user):
    assert [b["id"] for b in api.get("/api/storyboards/").json()] == [created["id"]]
    assert api.get(f"/api/storyboards/{created['id']}/").json()["title"] == "Rooftops"
    client.force_login(make_user())
    assert client.get("/api/storyboards/").json() == []


@pytest.mark.parametrize(
    "method, suffix",
    [("get", ""), ("patch", ""), ("delete", ""), ("post", "draft/")],
)
def test_another_persons_storyboard_answers_404(api, created, client, make_user, method, suffix):
    client.force_login(make_user())
    url = f"/api/storyboards/{created['id']}/{suffix}"
    response = getattr(client, method)(url, {"title": "mine now"}, content_type="application/json")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
    assert Storyboard.objects.get(pk=created["id"]).title == "Rooftops"


def test_anonymous_gets_403(client):
    assert client.get("/api/storyboards/").status_code == 403


def test_patch_characters_and_panels(api, created):
    url = f"/api/storyboards/{created['id']}/"
    body = api.patch(
        url,
        {
            "characters": CAST,
            "panels": [
                panel(),
                panel(
                    "Aiko runs.",
                    shot="action",
                    characters=["Aiko"],
                    dialogue=[{"speaker": "Aiko", "text": "Run!"}],
                ),
            ],
        },
    ).json()
    assert [c["name"] for c in body["characters"]] == ["Aiko", "Kenji"]
    assert [p["index"] for p in body["panels"]] == [1, 2]
    assert body["panels"][1]["dialogue"] == [
        {"speaker": "Aiko", "text": "Run!", "style": "speech", "place": None}
    ]
    assert body["complete"] is True
    assert all(len(p["content_hash"]) == 64 for p in body["panels"])
    assert body["version"] and body["version"] != created["version"]


def test_editing_one_panel_changes_only_its_hash_and_the_version(api, created):
    url = f"/api/storyboards/{created['id']}/"
    panels = [panel("One."), panel("Two."), panel("Three.")]
    before = api.patch(url, {"panels": panels}).json()
    panels[2] = panel("Three, edited.")
    after = api.patch(url, {"panels": panels}).json()
    hashes = lambda b: [p["content_hash"] for p in b["panels"]]  # noqa: E731
    assert hashes(before)[:2] == hashes(after)[:2]
    assert hashes(before)[2] != hashes(after)[2]
    assert before["version"] != after["version"]
    same = api.patch(url, {"panels": panels}).json()
    assert same["version"] == after["version"]


def test_a_characters_description_changes_the_panels_that_show_them(api, created):
    url = f"/api/storyboards/{created['id']}/"
    panels = [
        panel("Aiko alone.", characters=["Aiko"]),
        panel("Kenji alone.", characters=["Kenji"]),
    ]
    before = api.patch(url, {"characters": CAST, "panels": panels}).json()
    cast = [CAST[0] | {"description": "short white hair"}, CAST[1]]
    after = api.patch(url, {"characters": cast}).json()
    assert before["panels"][0]["content_hash"] != after["panels"][0]["content_hash"]
    assert before["panels"][1]["content_hash"] == after["panels"][1]["content_hash"]


def test_style_changes_every_hash(api, created):
    url = f"/api/storyboards/{created['id']}/"
    before = api.patch(url, {"panels": [panel()]}).json()
    after = api.patch(url, {"style": "noir"}).json()
    assert before["panels"][0]["content_hash"] != after["panels"][0]["content_hash"]


def test_reordering_keeps_hashes_and_changes_the_version(api, created):
    url = f"/api/storyboards/{created['id']}/"
    before = api.patch(url, {"panels": [panel("A."), panel("B.")]}).json()
    after = api.patch(url, {"panels": [panel("B."), panel("A.")]}).json()
    assert [p["content_hash"] for p in after["panels"]] == [
        p["content_hash"] for p in reversed(before["panels"])
    ]
    assert before["version"] != after["version"]


def test_complete_needs_a_description_on_every_panel(api, created):
    url = f"/api/storyboards/{created['id']}/"
    assert api.patch(url, {"panels": [panel(), panel("")]}).json()["complete"] is False
    assert api.patch(url, {"panels": [panel(), panel("x")]}).json()["complete"] is True


@pytest.mark.parametrize(
    "change, where",
    [
        ({"story": "x" * 20_001}, "story"),
        ({"title": "t" * 201}, "title"),
        ({"title": ""}, "title"),
        ({"style": "watercolour"}, "style"),
        ({"panels": [panel()] * 25}, "panels"),
        ({"characters": [{"name": f"C{i}"} for i in range(13)]}, "characters"),
        ({"characters": [{"name": "Aiko"}, {"name": "aiko"}]}, "characters"),
        ({"characters": [{"name": "n" * 61}]}, "characters[0].name"),
        ({"panels": [panel("d" * 1001)]}, "panels[0].description"),
        ({"panels": [panel(caption="c" * 301)]}, "panels[0].caption"),
        ({"panels": [panel(shot="sideways")]}, "panels[0].shot"),
        ({"panels": [panel(dialogue=[{"speaker": "", "text": "t" * 301}])]}, "text"),
        ({"panels": [panel(dialogue=[{"speaker": "", "text": "hi"}] * 7)]}, "dialogue"),
        ({"panels": [panel(characters=["Nobody"])]}, "Nobody"),
        ({"panels": [panel(dialogue=[{"speaker": "Ghost", "text": "boo"}])]}, "Ghost"),
        ({"panels": "lots"}, "panels"),
        ({"panels": [{"description": 5, "dialogue": "hello"}]}, "dialogue"),
        ({"title": {"nested": True}}, "title"),
        ({"story": "null \x00 byte"}, "story"),
        # A PATCH replaces lists whole: an item lacking a required field is
        # refused, not stored half (DRF's partial would have skipped it).
        ({"panels": [panel(dialogue=[{"speaker": ""}])]}, "text"),
        ({"characters": [{"description": "no name"}]}, "name"),
        ({"title": "\n\t\x1c "}, "title"),
        ({"panels": [panel(dialogue=[{"speaker": "", "text": "\x01\n"}])]}, "text"),
    ],
)
def test_bad_input_gets_a_clear_400_and_changes_nothing(api, created, change, where):
    url = f"/api/storyboards/{created['id']}/"
    api.patch(url, {"characters": CAST, "panels": [panel("Keep me.")]})
    before = api.get(url).json()
    response = api.patch(url, change)
    assert response.status_code == 400, response.json()
    body = response.json()
    assert body["error"] == "invalid"
    assert where in body["detail"], body["detail"]
    assert api.get(url).json() == before


def test_lettered_text_is_kept_on_one_line(api, created):
    """Titles, names, balloons and captions are drawn on one line each (a
    balloon wraps by itself): line breaks and control characters are spaces."""
    url = f"/api/storyboards/{created['id']}/"
    response = api.patch(
        url,
        {
            "title": "Two\r\nlines",
            "characters": [{"name": "Aiko\t", "description": "keeps\nits lines"}],
            "panels": [
                panel(
                    characters=["Aiko"],
                    dialogue=[{"speaker": "Aiko", "text": "Who's there?\nShow\u2029yourself."}],
                    caption="Night\x1cfalls.",
                )
            ],
        },
    )
    assert response.status_code == 200, response.json()
    saved = response.json()
    assert saved["title"] == "Two lines"
    assert saved["characters"][0]["description"] == "keeps\nits lines"  # a prompt, not lettering
    assert saved["panels"][0]["dialogue"] == [
        {"speaker": "Aiko", "text": "Who's there? Show yourself.", "style": "speech", "place": None}
    ]
    assert saved["panels"][0]["caption"] == "Night falls."


def test_renaming_or_removing_a_character_follows_in_the_panels(api, created):
    """The characters step saves the characters alone: the panels must not be
    left naming someone who is no longer a character (every later save of the
    panels would be refused)."""
    url = f"/api/storyboards/{created['id']}/"
    api.patch(
        url,
        {
            "characters": CAST,
            "panels": [
                panel(
                    characters=["Aiko", "Kenji"],
                    dialogue=[
                        {"speaker": "Aiko", "text": "Jump!"},
                        {"speaker": "Kenji", "text": "Now?"},
                    ],
                )
            ],
        },
    )
    renamed = api.patch(url, {"characters": [{"name": "Aiko"}, {"name": "Kenta"}]}).json()
    assert renamed["panels"][0]["characters"] == ["Aiko", "Kenta"]
    assert [d["speaker"] for d in renamed["panels"][0]["dialogue"]] == ["Aiko", "Kenta"]

    removed = api.patch(url, {"characters": [{"name": "Kenta"}]}).json()
    assert removed["panels"][0]["characters"] == ["Kenta"]
    assert removed["panels"][0]["dialogue"] == [
        {"speaker": "", "text": "Jump!", "style": "speech", "place": None},
        {"speaker": "Kenta", "text": "Now?", "style": "speech", "place": None},
    ]
    # The panels as they are now save again as they are.
    again = api.patch(url, {"panels": removed["panels"]})
    assert again.status_code == 200, again.json()


def test_create_refuses_bad_input_and_creates_nothing(api):
    response = api.post("/api/storyboards/", {"title": "", "story": "x"})
    assert response.status_code == 400
    assert response.json()["detail"].startswith("title:")
    assert not Storyboard.objects.exists()


def test_html_in_text_is_stored_verbatim_and_shown_escaped(api, client, created):
    url = f"/api/storyboards/{created['id']}/"
    evil = '<script>alert("x")</script>'
    body = api.patch(url, {"title": evil, "characters": [{"name": "Aiko", "description": evil}]})
    assert body.json()["title"] == evil
    page = client.get("/").content.decode()
    assert evil not in page and "&lt;script&gt;" in page


def test_draft_fills_panels_from_the_story(api, created):
    body = api.post(f"/api/storyboards/{created['id']}/draft/").json()
    assert [c["name"] for c in body["characters"]] == ["Aiko", "Kenji"]
    assert len(body["panels"]) == 3
    first, second, third = body["panels"]
    assert first["shot"] == "establishing" and first["characters"] == []
    assert second["dialogue"] == [
        {"speaker": "Aiko", "text": "They're right behind us!", "style": "shout", "place": None}
    ]
    assert second["shot"] == "action"
    assert third["dialogue"] == [
        {"speaker": "Kenji", "text": "Then we jump.", "style": "speech", "place": None}
    ]
    assert body["complete"] is True
    assert body["notice"] == ""


def test_draft_keeps_the_descriptions_of_existing_characters(api, created):
    url = f"/api/storyboards/{created['id']}/"
    api.patch(url, {"characters": [{"name": "Aiko", "description": "red scarf"}]})
    body = api.post(f"{url}draft/").json()
    assert body["characters"][0] == {
        "name": "Aiko",
        "description": "red scarf",
        "outfits": [],
        "sheet": None,
    }


def test_draft_of_an_empty_story_is_refused(api):
    created = api.post("/api/storyboards/", {"title": "Blank"}).json()
    response = api.post(f"/api/storyboards/{created['id']}/draft/")
    assert response.status_code == 400
    assert response.json()["error"] == "empty_story"


def test_delete(api, created):
    assert api.delete(f"/api/storyboards/{created['id']}/").status_code == 204
    assert api.get(f"/api/storyboards/{created['id']}/").status_code == 404
