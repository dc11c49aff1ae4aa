"""The library: characters (with their outfits and sheets) and places (with their pictures)
kept across comics. Adding one to a comic brings the same sheets, under the same hashes:
no render, no credit."""

import pytest

from ledger import services as ledger
from mangagen.characters import services as sheets
from mangagen.orchestration.comic_deletion import delete_comic
from mangagen.places import services as places
from mangagen.storyboards import services as storyboards
from tests.support import factories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("instant_renders")]

AIKO = {
    "name": "Aiko",
    "description": "long black hair",
    "outfits": [{"name": "winter coat", "description": "a long navy duffle coat"}],
}


@pytest.fixture
def source(user, account, sheet_queue, run):
    """A comic with Aiko (a sheet for her usual look and one for her coat) and a pictured place."""
    board = storyboards.create_storyboard(owner=user, title="First")
    storyboards.update_storyboard(
        storyboard=board,
        characters=[AIKO],
        places=[{"name": "Rooftop", "description": "the school rooftop"}],
        panels=[{"description": "Aiko waits.", "characters": ["Aiko"], "place": "Rooftop"}],
    )
    for outfit in ("", "winter coat"):
        with run.commits():
            sheets.request_sheet(storyboard=board, name="Aiko", outfit=outfit)
        run.render_sheet()
    places.set_picture(storyboard=board, name="Rooftop", image=factories.png())
    return board


def post(person, url, body):
    return person.post(url, body, content_type="application/json")


def available(user) -> int:
    return ledger.account_for(user).available


def test_a_saved_character_joins_another_comic_with_its_sheets_at_no_cost(person, user, source):
    saved = post(person, "/api/cast/", {"storyboard": source.pk, "name": "Aiko"})
    assert saved.status_code == 201
    member = saved.json()
    in_source = person.get(f"/api/storyboards/{source.pk}/").json()["characters"][0]
    assert member["name"] == "Aiko" and member["description"] == "long black hair"
    assert member["sheet"]["hash"] == in_source["sheet"]["hash"]
    assert member["outfits"][0]["sheet"]["hash"] == in_source["outfits"][0]["sheet"]["hash"]
    assert person.get("/api/cast/").json() == [member]

    other = factories.storyboard(user, title="Second", panels=[])
    credits = available(user)
    added = post(person, f"/api/storyboards/{other.pk}/characters/", {"cast": member["id"]})
    assert added.status_code == 201
    character = added.json()
    assert character["sheet"]["hash"] == member["sheet"]["hash"] and character["sheet"]["in_use"]
    assert character["outfits"][0]["sheet"]["hash"] == member["outfits"][0]["sheet"]["hash"]
    assert available(user) == credits
    # The same panel in either comic is the same picture.
    panel = {"description": "Aiko waits.", "characters": ["Aiko"]}
    storyboards.update_storyboard(storyboard=other, panels=[panel])
    storyboards.update_storyboard(storyboard=source, panels=[panel])
    assert other.panels.get().art_hash == source.panels.get().art_hash

    again = post(person, f"/api/storyboards/{other.pk}/characters/", {"cast": member["id"]})
    assert again.status_code == 409 and again.json()["error"] == "name_taken"


def test_the_library_keeps_its_pictures_when_the_comic_goes(person, user, source):
    member = post(person, "/api/cast/", {"storyboard": source.pk, "name": "Aiko"}).json()
    place = post(person, "/api/places/", {"storyboard": source.pk, "name": "Rooftop"}).json()
    delete_comic(storyboard=source)
    for url in (member["sheet"]["image_url"], place["picture"]["image_url"]):
        response = person.get(url)
        assert response.status_code == 200 and response["Content-Type"] == "image/png"


def test_saving_a_name_again_replaces_that_entry(person, user, source):
    first = post(person, "/api/cast/", {"storyboard": source.pk, "name": "Aiko"}).json()
    storyboards.update_storyboard(
        storyboard=source, characters=[{**AIKO, "description": "short white hair"}]
    )
    again = post(person, "/api/cast/", {"storyboard": source.pk, "name": "Aiko"})
    assert again.status_code == 200
    assert again.json()["id"] == first["id"] and again.json()["description"] == "short white hair"
    assert again.json()["sheet"] is None  # the sheet went stale with the new description
    assert len(person.get("/api/cast/").json()) == 1


def test_a_saved_place_joins_another_comic_with_its_picture(person, user, source):
    saved = post(person, "/api/places/", {"storyboard": source.pk, "name": "Rooftop"})
    assert saved.status_code == 201
    entry = saved.json()
    picture_hash = source.places.get().picture_hash
    assert entry["picture"]["hash"] == picture_hash
    other = factories.storyboard(user, title="Second", panels=[])
    added = post(person, f"/api/storyboards/{other.pk}/places/", {"place": entry["id"]})
    assert added.status_code == 201
    assert added.json()["name"] == "Rooftop" and added.json()["picture"]["hash"] == picture_hash
    again = post(person, f"/api/storyboards/{other.pk}/places/", {"place": entry["id"]})
    assert again.status_code == 409 and again.json()["error"] == "name_taken"


def test_removing_an_entry_removes_its_pictures(person, user, source):
    member = post(person, "/api/cast/", {"storyboard": source.pk, "name": "Aiko"}).json()
    assert person.delete(f"/api/cast/{member['id']}/").status_code == 204
    assert person.get(member["sheet"]["image_url"]).status_code == 404
    assert person.get("/api/cast/").json() == []


def test_saving_what_the_comic_lacks_is_404_and_bad_input_400(person, user, source):
    missing = post(person, "/api/cast/", {"storyboard": source.pk, "name": "Ren"})
    assert missing.status_code == 404 and missing.json()["error"] == "no_such_character"
    missing = post(person, "/api/places/", {"storyboard": source.pk, "name": "Beach"})
    assert missing.status_code == 404 and missing.json()["error"] == "no_such_place"
    assert post(person, "/api/cast/", {"name": "Aiko"}).json()["error"] == "invalid"
    other = factories.storyboard(user, panels=[])
    assert post(person, f"/api/storyboards/{other.pk}/characters/", {}).status_code == 400


def test_a_full_comic_refuses_another_character(person, user, source):
    member = post(person, "/api/cast/", {"storyboard": source.pk, "name": "Aiko"}).json()
    full = factories.storyboard(user, characters=[{"name": f"C{i}"} for i in range(12)], panels=[])
    response = post(person, f"/api/storyboards/{full.pk}/characters/", {"cast": member["id"]})
    assert response.status_code == 409 and response.json()["error"] == "list_full"


def test_no_one_else_reads_or_uses_anothers_library(person, user, source, make_user, client):
    member = post(person, "/api/cast/", {"storyboard": source.pk, "name": "Aiko"}).json()
    stranger = make_user()
    theirs = factories.storyboard(stranger, panels=[])
    client.force_login(stranger)
    assert client.get("/api/cast/").json() == []
    assert client.get(member["sheet"]["image_url"]).status_code == 404
    assert client.delete(f"/api/cast/{member['id']}/").status_code == 404
    used = post(client, f"/api/storyboards/{theirs.pk}/characters/", {"cast": member["id"]})
    assert used.status_code == 404
    # …nor saves from a comic that is not theirs.
    assert post(client, "/api/cast/", {"storyboard": source.pk, "name": "Aiko"}).status_code == 404


def test_copies_of_rendered_sheets_count_toward_the_picture_budget(person, user, source, settings):
    """A paid render's own picture is bounded by its price; its free copies (into the
    library, then into another comic) count toward PICTURE_BYTES_PER_PERSON."""
    from mangagen.characters import picture_budget
    from mangagen.characters.models import CharacterSheet

    rendered = CharacterSheet.objects.filter(storyboard=source).exclude(image="")
    drawn = sum(s.bytes for s in rendered)
    stored = picture_budget.stored_picture_bytes(owner_id=user.pk)
    assert stored == source.places.get().picture_bytes, "paid renders are not counted"

    settings.PICTURE_BYTES_PER_PERSON = stored + drawn - 1
    refused = post(person, "/api/cast/", {"storyboard": source.pk, "name": "Aiko"})
    assert refused.status_code == 400 and refused.json()["error"] == "sheet_uploads_full"
    assert refused.json()["budget"] == "PICTURE_BYTES_PER_PERSON"
    assert person.get("/api/cast/").json() == []

    settings.PICTURE_BYTES_PER_PERSON = stored + drawn
    member = post(person, "/api/cast/", {"storyboard": source.pk, "name": "Aiko"}).json()
    assert picture_budget.stored_picture_bytes(owner_id=user.pk) == stored + drawn
    other = factories.storyboard(user, title="Second", panels=[])
    again = post(person, f"/api/storyboards/{other.pk}/characters/", {"cast": member["id"]})
    assert again.status_code == 400 and again.json()["error"] == "sheet_uploads_full"
    assert not other.characters.exists()
