"""GET /api/storyboards/<id>/panels/<index>/lettering/: where the lettering put each
balloon, its tail and each sound effect on the panel's current take, the same as its
lettered picture shows (docs/api.md, "Lettering you direct")."""

import io

import pytest
from PIL import Image

PANELS = [
    {
        "description": "Aiko on the rooftop.",
        "shot": "medium",
        "characters": ["Aiko"],
        "dialogue": [
            {"speaker": "Aiko", "text": "They're right behind us!"},
            {"speaker": "Aiko", "text": "Over here!", "place": {"x": 0.99, "y": 0.02}},
        ],
        "sfx": [{"text": "DOKI DOKI DOKI DOKI DOKI DOKI DOKI DOKI!", "x": 0.97, "y": 0.5}],
    },
    {"description": "The street below.", "shot": "wide"},
]

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("instant_renders"),
    pytest.mark.board(characters=[{"name": "Aiko"}], panels=PANELS),
]


@pytest.fixture
def drawn(board, user, account, run):
    job = run.generate(user, board)
    run.render()
    job.refresh_from_db()
    run.approve(job, 1)
    return board


def test_each_balloon_and_sound_effect_is_reported_where_the_picture_shows_it(drawn, person):
    answer = person.get(f"/api/storyboards/{drawn.pk}/panels/1/lettering/")
    assert answer.status_code == 200, answer.content
    layout = answer.json()
    auto, placed = layout["lines"]
    assert (auto["number"], auto["auto"], auto["kind"]) == (0, True, "balloon")
    assert (placed["number"], placed["auto"], placed["moved_in"]) == (1, False, True)
    (effect,) = layout["sfx"]
    assert effect["moved_in"] and effect["shrunk"]
    assert 0 <= effect["box"]["x0"] < effect["box"]["x1"] <= 1
    # The picture the editor shows is the one these places were read from: the auto
    # balloon's box holds ink the bare art lacks.
    lettered = Image.open(io.BytesIO(person.get(layout["image_url"]).content)).convert("L")
    width, height = lettered.size
    assert (layout["width"], layout["height"]) == (width, height)
    box = auto["box"]
    crop = (
        round(box["x0"] * width),
        round(box["y0"] * height),
        round(box["x1"] * width),
        round(box["y1"] * height),
    )
    region = lettered.crop(crop)
    assert region.getextrema() == (0, 255)  # a balloon: paper and ink
    # Asked again, the same answer (from the cache beside the picture).
    assert person.get(f"/api/storyboards/{drawn.pk}/panels/1/lettering/").json() == layout


def test_a_panel_not_drawn_yet_or_someone_elses_is_404(drawn, person, client, make_user):
    assert person.get(f"/api/storyboards/{drawn.pk}/panels/2/lettering/").status_code == 404
    client.force_login(make_user("intruder"))
    assert client.get(f"/api/storyboards/{drawn.pk}/panels/1/lettering/").status_code == 404
