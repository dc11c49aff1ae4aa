"""Outfits, places and blocking: what a panel's picture depends on beyond its description.

Each enters the art hash of exactly the panels that use it (a change re-renders
those and no other), comics that use none hash as before, the job hands them to
the renderer, the procedural renderer draws them, and the API refuses what a
comic does not have with a 400 that names it.
"""

from urllib.parse import quote

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

from mangagen.jobs import services as jobs
from mangagen.jobs.quote import quote as quote_of
from mangagen.lettering import Letterable
from mangagen.places import services as places
from mangagen.renderers import CharacterSpec, PanelSpec, PlaceSpec
from mangagen.renderers.prompts import image_prompt
from mangagen.renderers.providers.procedural import Backdrop, Outfit, ProceduralRenderer
from mangagen.storyboards import services as storyboards
from mangagen.storyboards.hashing import art_hash
from tests.support import factories

CHARACTERS = [
    {
        "name": "Aiko",
        "description": "long black hair",
        "outfits": [
            {"name": "winter coat", "description": "a long navy duffle coat"},
            {"name": "uniform", "description": "sailor school uniform"},
        ],
    },
    {"name": "Kenji", "description": "spiky hair, glasses"},
]
PLACES = [
    {"name": "Rooftop", "description": "the school rooftop at dusk, chain-link fence"},
    {"name": "Station", "description": "a small train station in the rain"},
]
PANELS = [
    {"description": "The roof.", "shot": "establishing", "place": "Rooftop"},
    {
        "description": "Aiko waits.",
        "shot": "medium",
        "characters": ["Aiko"],
        "place": "Rooftop",
        "outfits": {"Aiko": "winter coat"},
    },
    {
        "description": "Kenji arrives.",
        "shot": "medium",
        "characters": ["Kenji"],
        "place": "Station",
    },
    {
        "description": "Both of them.",
        "shot": "wide",
        "characters": ["Aiko", "Kenji"],
        "outfits": {"Aiko": "uniform"},
        "blocking": {"Aiko": "left", "Kenji": "right"},
    },
    {"description": "Aiko alone.", "shot": "close-up", "characters": ["Aiko"]},
]


pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("instant_renders"),
    pytest.mark.board(title="Winter", characters=CHARACTERS, places=PLACES, panels=PANELS),
]


def art(board):
    return {p.index: p.art_hash for p in board.panels.all()}


def redrawn(board, user):
    quote = quote_of(storyboard=board, user=user)
    return quote.render


def edit(board, *, characters=None, places=None, panels=None):
    return storyboards.update_storyboard(
        storyboard=board, characters=characters, places=places, panels=panels
    )


def with_outfits(**descriptions):
    """The characters with Aiko's outfits (by name, spaces as underscores) described anew."""
    aiko = {**CHARACTERS[0], "outfits": [dict(o) for o in CHARACTERS[0]["outfits"]]}
    for outfit in aiko["outfits"]:
        outfit["description"] = descriptions.get(
            outfit["name"].replace(" ", "_"), outfit["description"]
        )
    return [aiko, CHARACTERS[1]]


# --- the art hash: absent keys stay absent -------------------------------------------------------


def test_a_comic_without_outfits_places_or_blocking_hashes_as_before(user):
    board = factories.storyboard(
        user,
        characters=[{"name": "Aiko", "description": "red scarf"}],
        panels=[{"description": "Aiko runs.", "shot": "action", "characters": ["Aiko"]}],
    )
    panel = board.panels.get()
    # The hash as it was computed before outfits, places and blocking existed:
    assert panel.art_hash == art_hash(
        style="manga",
        description="Aiko runs.",
        shot="action",
        characters=["Aiko"],
        character_descriptions={"Aiko": "red scarf"},
    )
    assert panel.art_inputs == {} and panel.place == "" and panel.blocking == {}


def test_a_place_that_no_panel_uses_changes_no_hash(user, board):
    before = art(board)
    edit(board, places=[*PLACES, {"name": "Beach", "description": "a quiet beach"}])
    assert art(board) == before


# --- a change re-renders exactly the panels it touches ------------------------------------------


def test_an_outfits_description_redraws_exactly_the_panels_where_it_is_worn(user, board):
    factories.keep(board)
    assert redrawn(board, user) == []
    edit(board, characters=with_outfits(winter_coat="a red puffer jacket"))
    assert redrawn(board, user) == [2]
    edit(board, characters=with_outfits(uniform="a blazer and tie"))
    assert redrawn(board, user) == [4]  # the coat as it was: its kept art is shown again


def test_renaming_an_outfit_changes_no_picture(user, board):
    factories.keep(board)
    renamed = [
        {**CHARACTERS[0], "outfits": [{**CHARACTERS[0]["outfits"][0], "name": "coat"}]},
        CHARACTERS[1],
    ]
    panels = [dict(p) for p in PANELS]
    panels[1] = {**panels[1], "outfits": {"Aiko": "coat"}}
    panels[3] = {**panels[3], "outfits": {}}  # the uniform is gone: panel 4 is redrawn
    edit(board, characters=renamed, panels=panels)
    assert redrawn(board, user) == [4]


def test_changing_what_a_panel_wears_redraws_that_panel_only(user, board):
    factories.keep(board)
    panels = [dict(p) for p in PANELS]
    panels[4] = {**panels[4], "outfits": {"Aiko": "winter coat"}}
    edit(board, panels=panels)
    assert redrawn(board, user) == [5]


def test_an_outfit_sheet_redraws_exactly_the_panels_where_it_is_worn(
    user, board, account, client, sheet_queue, django_capture_on_commit_callbacks
):
    from mangagen.characters import services as sheets

    factories.keep(board)
    with django_capture_on_commit_callbacks(execute=True):
        sheet = sheets.request_sheet(storyboard=board, name="Aiko", outfit="winter coat")
    assert redrawn(board, user) == []  # rendering: not in use yet
    with django_capture_on_commit_callbacks(execute=True):
        assert sheets.perform_sheet_render(sheet_id=sheet_queue[0][0][0]) == "shown"
    sheet.refresh_from_db()
    assert redrawn(board, user) == [2]
    assert board.panels.get(index=2).art_inputs["outfits"]["Aiko"]["sheet"] == sheet.hash
    client.force_login(user)
    data = client.get(f"/api/storyboards/{board.pk}/").json()
    coat = data["characters"][0]["outfits"][0]
    assert coat["name"] == "winter coat" and coat["sheet"]["hash"] == sheet.hash
    assert data["characters"][0]["sheet"] is None  # the usual look has none
    # Changing the outfit's description makes its sheet stale (out of use) again.
    edit(board, characters=with_outfits(winter_coat="a red puffer jacket"))
    data = client.get(f"/api/storyboards/{board.pk}/").json()
    assert data["characters"][0]["outfits"][0]["sheet"]["state"] == "stale"
    assert "sheet" not in board.panels.get(index=2).art_inputs["outfits"]["Aiko"]


def test_a_places_description_redraws_exactly_the_panels_set_there(user, board):
    factories.keep(board)
    edit(board, places=[{**PLACES[0], "description": "the rooftop at night"}, PLACES[1]])
    assert redrawn(board, user) == [1, 2]


def test_renaming_a_place_changes_no_picture_and_panels_follow(user, board):
    factories.keep(board)
    edit(board, places=[{**PLACES[0], "name": "Roof"}, PLACES[1]])
    assert redrawn(board, user) == []
    assert [p.place for p in board.panels.all()] == ["Roof", "Roof", "Station", "", ""]


def test_removing_a_place_sets_its_panels_nowhere(user, board):
    factories.keep(board)
    edit(board, places=[PLACES[0]])
    assert redrawn(board, user) == [3]
    assert board.panels.get(index=3).place == ""


def test_a_places_picture_redraws_exactly_the_panels_set_there(user, board):
    factories.keep(board)
    place = places.set_picture(storyboard=board, name="Station", image=factories.png())
    assert redrawn(board, user) == [3]
    assert board.panels.get(index=3).art_inputs["place"]["picture"] == place.picture_hash
    places.remove_picture(storyboard=board, name="Station")
    assert redrawn(board, user) == []


def test_blocking_redraws_exactly_the_panels_it_changes(user, board):
    factories.keep(board)
    panels = [dict(p) for p in PANELS]
    panels[3] = {**panels[3], "blocking": {"Aiko": "right", "Kenji": "left"}}
    edit(board, panels=panels)
    assert redrawn(board, user) == [4]
    panels[2] = {**panels[2], "blocking": {"Kenji": "center"}}
    edit(board, panels=panels)
    assert redrawn(board, user) == [3, 4]


def test_a_character_removed_takes_its_outfit_and_place_in_the_panels_with_it(user, board):
    edit(board, characters=[CHARACTERS[1]])
    fourth = board.panels.get(index=4)
    assert fourth.characters == ["Kenji"]
    assert fourth.outfits == {} and fourth.blocking == {"Kenji": "right"}


# --- the API refuses what the comic does not have ----------------------------------------------


@pytest.mark.parametrize(
    "change, words",
    [
        ({"place": "Beach"}, "'Beach', which is not among the places"),
        ({"outfits": {"Kenji": "winter coat"}}, "'Kenji' wears an outfit, who is not in the panel"),
        ({"outfits": {"Aiko": "pyjamas"}}, "'pyjamas', which is not one of their outfits"),
        ({"blocking": {"Kenji": "left"}}, "'Kenji' stands, who is not in the panel"),
    ],
)
def test_a_panel_naming_what_the_comic_lacks_is_a_400_naming_it(client, user, board, change, words):
    client.force_login(user)
    panels = [dict(p) for p in PANELS]
    panels[1] = {**panels[1], **change}
    before = art(board)
    response = client.patch(
        f"/api/storyboards/{board.pk}/", {"panels": panels}, content_type="application/json"
    )
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid" and "Panel 2" in body["detail"] and words in body["detail"]
    assert art(board) == before


def test_blocking_takes_left_center_or_right_only(client, user, board):
    client.force_login(user)
    panels = [dict(p) for p in PANELS]
    panels[1] = {**panels[1], "blocking": {"Aiko": "upstage"}}
    response = client.patch(
        f"/api/storyboards/{board.pk}/", {"panels": panels}, content_type="application/json"
    )
    assert response.status_code == 400
    assert "panels[1].blocking.Aiko" in response.json()["detail"]


def test_outfit_and_place_names_differ_ignoring_case(client, user, board):
    client.force_login(user)
    twice = [{"name": "Roof"}, {"name": "roof"}]
    response = client.patch(
        f"/api/storyboards/{board.pk}/", {"places": twice}, content_type="application/json"
    )
    assert (
        response.status_code == 400 and "Two places are named 'roof'" in response.json()["detail"]
    )


def test_the_storyboard_shows_places_outfits_and_blocking(client, user, board):
    client.force_login(user)
    data = client.get(f"/api/storyboards/{board.pk}/").json()
    assert data["places"][0] == {
        "name": "Rooftop",
        "description": PLACES[0]["description"],
        "picture": None,
    }
    assert [o["name"] for o in data["characters"][0]["outfits"]] == ["winter coat", "uniform"]
    fourth = data["panels"][3]
    assert fourth["blocking"] == {"Aiko": "left", "Kenji": "right"}
    assert fourth["outfits"] == {"Aiko": "uniform"} and fourth["place"] == ""
    assert data["series"] is None


def test_a_place_picture_is_the_owners_alone(client, user, board, make_user):
    client.force_login(user)
    url = f"/api/storyboards/{board.pk}/places/{quote('Station')}/picture/"
    upload = SimpleUploadedFile("station.png", factories.png(), content_type="image/png")
    response = client.put(
        url, data=encode_multipart(BOUNDARY, {"image": upload}), content_type=MULTIPART_CONTENT
    )
    assert response.status_code == 200
    picture = response.json()["place"]["picture"]
    assert client.get(picture["image_url"]).headers["Content-Type"] == "image/png"
    client.force_login(make_user())
    assert client.get(picture["image_url"]).status_code == 404
    assert client.delete(url).status_code == 404
    client.force_login(user)
    assert (
        client.put(
            f"/api/storyboards/{board.pk}/places/Nowhere/picture/",
            data=encode_multipart(
                BOUNDARY, {"image": SimpleUploadedFile("x.png", factories.png())}
            ),
            content_type=MULTIPART_CONTENT,
        ).json()["error"]
        == "no_such_place"
    )
    assert client.delete(url).status_code == 204
    assert client.get(picture["image_url"]).status_code == 404


# --- the job hands them to the renderer ---------------------------------------------------------


def test_a_job_renders_each_panel_with_its_place_outfits_and_blocking(
    user, board, account, run, monkeypatch, django_capture_on_commit_callbacks
):
    places.set_picture(storyboard=board, name="Rooftop", image=factories.png())
    seen = []
    real = ProceduralRenderer.render

    def spy(self, spec: PanelSpec, seed, **kwargs):
        seen.append(spec)
        return real(self, spec, seed, **kwargs)

    monkeypatch.setattr(ProceduralRenderer, "render", spy)
    with django_capture_on_commit_callbacks(execute=True):
        job, _ = jobs.generate(user=user, storyboard=board)
    for index in range(1, 5):
        run.render()
        run.approve(job, index)
    first, second, third, fourth = seen
    assert first.place.name == "Rooftop" and first.place.reference.startswith(b"\x89PNG")
    assert second.characters[0].outfit == "a long navy duffle coat"
    assert third.place == PlaceSpec("Station", PLACES[1]["description"])
    assert [(c.name, c.position, c.outfit) for c in fourth.characters] == [
        ("Aiko", "left", "sailor school uniform"),
        ("Kenji", "right", ""),
    ]
    assert fourth.place is None


# --- the procedural renderer draws them ----------------------------------------------------------


def draw(spec: PanelSpec) -> tuple[bytes, dict]:
    return ProceduralRenderer(cold_start_seconds=0, render_seconds=0).draw_with_faces(spec, 7)


def two(*, aiko="", kenji="", outfit="", place=None, shot="medium") -> PanelSpec:
    return PanelSpec(
        style="manga",
        description="x",
        shot=shot,
        characters=(
            CharacterSpec("Aiko", "long black hair", position=aiko, outfit=outfit),
            CharacterSpec("Kenji", "spiky hair", position=kenji),
        ),
        place=place,
    )


def test_figures_stand_where_the_blocking_says():
    _, unplaced = draw(two())
    assert unplaced["Aiko"][0] < unplaced["Kenji"][0]  # left to right in the cast's order
    _, swapped = draw(two(aiko="right", kenji="left"))
    assert swapped["Aiko"][0] > 0.7 and swapped["Kenji"][0] < 0.3
    _, centred = draw(two(aiko="center", kenji="center"))
    assert abs(centred["Aiko"][0] - centred["Kenji"][0]) > 0.1  # side by side, not stacked


def test_a_place_is_drawn_the_same_way_in_every_panel_and_differs_from_another():
    roof = PlaceSpec("Rooftop", "the school rooftop at dusk")
    again = PlaceSpec("Roof", "the school rooftop at dusk")  # a rename: the same backdrop
    beach = PlaceSpec("Beach", "a quiet beach at noon")
    assert Backdrop.of(roof) == Backdrop.of(again)
    assert Backdrop.of(roof).motif == "windows" and Backdrop.of(beach).motif == "waves"
    assert draw(two(place=roof))[0] == draw(two(place=again))[0]
    assert draw(two(place=roof))[0] != draw(two(place=beach))[0]
    assert draw(two(place=roof))[0] != draw(two())[0]
    pictured = PlaceSpec("Rooftop", "the school rooftop at dusk", reference=factories.png())
    assert Backdrop.of(pictured) != Backdrop.of(roof)  # a picture is a new look of the place


def test_an_outfit_changes_the_figure_and_is_the_same_each_time():
    coat, uniform = "a long navy duffle coat", "sailor school uniform"
    assert Outfit.of(coat).hem == "coat"
    assert draw(two(outfit=coat))[0] != draw(two())[0]
    assert draw(two(outfit=coat))[0] != draw(two(outfit=uniform))[0]
    assert draw(two(outfit=coat))[0] == draw(two(outfit=coat))[0]
    assert draw(two(outfit=coat, shot="wide"))[0] != draw(two(shot="wide"))[0]


def test_the_prompt_names_the_setting_and_the_outfit():
    prompt = image_prompt(two(outfit="a long navy duffle coat", place=PlaceSpec("R", "a rooftop")))
    assert "Setting: R, a rooftop" in prompt
    assert "Aiko: long black hair, wearing a long navy duffle coat" in prompt
    assert "setting" not in image_prompt(two()) and "wearing" not in image_prompt(two())


def test_balloon_tails_go_where_the_blocking_stands_the_speaker_without_faces():
    panel = Letterable.of(
        dialogue=[{"speaker": "Aiko", "text": "Here."}],
        caption="",
        shot="medium",
        characters=["Aiko", "Kenji"],
        faces=None,
        blocking={"Aiko": "right", "Kenji": "left"},
    )
    speakers = panel.speakers()
    assert speakers["Aiko"].x > 0.7 and speakers["Kenji"].x < 0.3
    unblocked = Letterable.of(
        dialogue=[], caption="", shot="medium", characters=["Aiko", "Kenji"], faces=None
    )
    assert unblocked.speakers()["Aiko"].x < unblocked.speakers()["Kenji"].x
