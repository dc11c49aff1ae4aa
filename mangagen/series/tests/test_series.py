"""Series: numbered chapters that start with the series' style, cast and places.

A chapter carries every character of earlier chapters with their latest
description and their sheet in use (the same hash: nothing rendered, nothing
paid), their outfits and the places with their pictures; the series lists its
chapters with their progress and exports as one PDF or one CBZ per chapter.
"""

import io
import zipfile
from urllib.parse import quote

import pytest

from mangagen.characters import services as sheets
from mangagen.places import services as places
from mangagen.series.models import Series
from mangagen.series.selectors import series_cast
from mangagen.storyboards import services as storyboards
from mangagen.storyboards.models import Storyboard
from tests.support import factories
from tests.support.factories import balance
from tests.support.ledger_invariants import assert_ledger_invariants
from tests.support.series import CAST, PANELS, chapter, new_series, post

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("instant_renders")]


@pytest.fixture
def render_sheet(run, sheet_queue, django_capture_on_commit_callbacks):
    def go(board, name, outfit=""):
        with django_capture_on_commit_callbacks(execute=True):
            sheet = sheets.request_sheet(storyboard=board, name=name, outfit=outfit)
        assert run.render_sheet() == "shown"
        sheet.refresh_from_db()
        return sheet

    return go


def first_chapter(person, series_id):
    """Chapter one, with the cast, a place with its picture, and three panels."""
    data = chapter(person, series_id, title="Chapter one")
    board = Storyboard.objects.get(pk=data["id"])
    storyboards.update_storyboard(
        storyboard=board,
        characters=CAST,
        places=[{"name": "Rooftop", "description": "the school rooftop"}],
        panels=PANELS,
    )
    places.set_picture(storyboard=board, name="Rooftop", image=factories.png())
    return board


def test_a_series_starts_empty_and_lists_its_chapters_in_order(person):
    made = new_series(person)
    assert made["title"] == "Rooftops" and made["style"] == "shoujo" and made["chapters"] == []
    one = chapter(person, made["id"], title="The roof")
    two = chapter(person, made["id"])
    assert one["style"] == "shoujo" and one["series"] == {
        "id": made["id"],
        "title": "Rooftops",
        "chapter": 1,
    }
    assert two["title"] == "Rooftops — Chapter 2" and two["series"]["chapter"] == 2
    listed = person.get(f"/api/series/{made['id']}/").json()["chapters"]
    assert [(c["number"], c["storyboard"], c["title"]) for c in listed] == [
        (1, one["id"], "The roof"),
        (2, two["id"], "Rooftops — Chapter 2"),
    ]
    assert [s["id"] for s in person.get("/api/series/").json()] == [made["id"]]


def test_the_next_chapter_starts_with_the_cast_its_sheets_and_the_places_at_no_cost(
    person, user, account, render_sheet
):
    made = new_series(person)
    one = first_chapter(person, made["id"])
    aiko = render_sheet(one, "Aiko")
    coat = render_sheet(one, "Aiko", outfit="winter coat")
    before = balance(user)
    assert before == (8, 0)  # two sheets, one credit each

    two = chapter(person, made["id"], story="Next day, Kenji brings snacks.")

    assert balance(user) == before  # nothing rendered, nothing paid
    cast = {c["name"]: c for c in two["characters"]}
    assert list(cast) == ["Aiko", "Kenji"]
    assert cast["Aiko"]["description"] == "long black hair"
    assert cast["Aiko"]["sheet"]["hash"] == aiko.hash and cast["Aiko"]["sheet"]["in_use"]
    assert cast["Aiko"]["outfits"][0]["sheet"]["hash"] == coat.hash
    assert cast["Kenji"]["sheet"] is None
    assert two["places"][0]["name"] == "Rooftop"
    assert two["places"][0]["picture"]["hash"] == one.places.get().picture_hash
    # The sheet's picture is the chapter's own copy, served to its owner.
    image = person.get(cast["Aiko"]["sheet"]["image_url"])
    assert image.status_code == 200 and image.headers["Content-Type"] == "image/png"
    # A panel with Aiko is drawn from the same sheet: the same art as in chapter one.
    board = Storyboard.objects.get(pk=two["id"])
    storyboards.update_storyboard(storyboard=board, panels=PANELS)
    assert [p.art_hash for p in board.panels.all()] == [p.art_hash for p in one.panels.all()]
    assert_ledger_invariants()


def test_a_chapter_takes_each_character_as_the_latest_chapter_has_them(person, user, render_sheet):
    made = new_series(person)
    one = first_chapter(person, made["id"])
    two = Storyboard.objects.get(pk=chapter(person, made["id"])["id"])
    storyboards.update_storyboard(
        storyboard=two,
        characters=[
            {"name": "Aiko", "description": "short white hair"},
            {"name": "Ren", "description": "tall"},
        ],
    )
    three = chapter(person, made["id"])
    cast = {c["name"]: c["description"] for c in three["characters"]}
    assert cast == {"Aiko": "short white hair", "Kenji": "spiky hair", "Ren": "tall"}
    assert one.characters.count() == 2  # earlier chapters keep theirs


def test_a_stale_sheet_is_not_carried(person, user, account, render_sheet):
    made = new_series(person)
    one = first_chapter(person, made["id"])
    render_sheet(one, "Aiko")
    storyboards.update_storyboard(
        storyboard=one, characters=[{**CAST[0], "description": "short white hair"}, CAST[1]]
    )
    two = chapter(person, made["id"])
    assert two["characters"][0]["sheet"] is None


def test_the_series_lists_each_chapters_progress(person, user):
    made = new_series(person)
    one = first_chapter(person, made["id"])
    factories.keep(one, indices=[1, 3])
    listed = person.get(f"/api/series/{made['id']}/").json()
    assert listed["chapters"][0]["panels"] == 3 and listed["chapters"][0]["kept"] == 2
    assert [c["name"] for c in listed["cast"]] == ["Aiko", "Kenji"]
    assert [p["name"] for p in listed["places"]] == ["Rooftop"]


def test_a_chapters_cbz_names_its_series_number_and_count(person, user):
    made = new_series(person, title="Rooftops & <Stairs>")
    one = first_chapter(person, made["id"])
    factories.keep(one)
    chapter(person, made["id"])
    info = comic_info(person.get(f"/api/storyboards/{one.pk}/export/?format=cbz"))
    assert (
        "<Series>Rooftops &amp; &lt;Stairs&gt;</Series><Number>1</Number><Count>2</Count>" in info
    )
    assert (
        "<Characters>Aiko, Kenji</Characters>" in info and "<Locations>Rooftop</Locations>" in info
    )
    chapter(person, made["id"])  # a third chapter: the CBZ of chapter one counts it
    info = comic_info(person.get(f"/api/storyboards/{one.pk}/export/?format=cbz"))
    assert "<Count>3</Count>" in info


def test_the_whole_series_is_one_pdf_and_a_zip_of_one_cbz_per_chapter(person, user):
    made = new_series(person)
    one = first_chapter(person, made["id"])
    two = Storyboard.objects.get(pk=chapter(person, made["id"])["id"])
    chapter(person, made["id"])  # chapter three: nothing drawn, left out
    storyboards.update_storyboard(storyboard=two, panels=PANELS[:2])
    factories.keep(one)
    factories.keep(two)
    pages = [
        pdf_pages(person.get(f"/api/storyboards/{b.pk}/export/?format=pdf")) for b in (one, two)
    ]

    response = person.get(f"/api/series/{made['id']}/export/?format=pdf")
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert 'filename="rooftops.pdf"' in response["Content-Disposition"]
    assert pages[0] >= 1 and pages[1] >= 1
    assert pdf_pages(response) == sum(pages)

    response = person.get(f"/api/series/{made['id']}/export/?format=cbz")
    assert response["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        names = archive.namelist()
        assert names == ["001-chapter-one.cbz", "002-rooftops-chapter-2.cbz"]
        with zipfile.ZipFile(io.BytesIO(archive.read(names[1]))) as cbz:
            assert "<Number>2</Number><Count>3</Count>" in cbz.read("ComicInfo.xml").decode()


def test_a_series_with_nothing_drawn_has_nothing_to_export(person):
    made = new_series(person)
    first_chapter(person, made["id"])
    response = person.get(f"/api/series/{made['id']}/export/?format=pdf")
    assert response.status_code == 409 and response.json()["error"] == "nothing_to_export"
    assert person.get(f"/api/series/{made['id']}/export/?format=png").json()["error"] == "invalid"


def test_another_persons_series_is_404_everywhere(person, make_user, client):
    made = new_series(person)
    client.force_login(make_user())
    base = f"/api/series/{made['id']}/"
    assert client.get(base).status_code == 404
    assert client.patch(base, {"title": "x"}, content_type="application/json").status_code == 404
    assert client.delete(base).status_code == 404
    assert post(client, f"{base}chapters/", {"story": "x"}).status_code == 404
    assert client.get(f"{base}export/?format=pdf").status_code == 404
    assert client.get("/api/series/").json() == []


def test_deleting_a_series_keeps_its_chapters_as_comics(person):
    made = new_series(person)
    one = chapter(person, made["id"])
    assert person.delete(f"/api/series/{made['id']}/").status_code == 204
    kept = person.get(f"/api/storyboards/{one['id']}/").json()
    assert kept["series"] is None and kept["title"] == one["title"]


def test_a_renamed_series_keeps_numbering_and_a_new_style_applies_to_later_chapters(person):
    made = new_series(person)
    chapter(person, made["id"])
    response = person.patch(
        f"/api/series/{made['id']}/", {"style": "noir"}, content_type="application/json"
    )
    assert response.json()["style"] == "noir"
    assert chapter(person, made["id"])["style"] == "noir"


def test_bad_input_is_a_400_naming_the_field(person):
    response = post(person, "/api/series/", {"title": "", "style": "watercolour"})
    assert response.status_code == 400 and response.json()["error"] == "invalid"
    assert set(response.json()["fields"]) == {"title", "style"}


def test_drafting_a_chapter_knows_the_cast_places_and_how_the_last_one_ended(
    person, user, monkeypatch
):
    from mangagen.drafting.rules import RuleDrafter

    seen = {}
    real = RuleDrafter.draft

    def spy(self, **kwargs):
        seen.update(kwargs)
        return real(self, **kwargs)

    monkeypatch.setattr(RuleDrafter, "draft", spy)
    made = new_series(person)
    first_chapter(person, made["id"])
    two = chapter(person, made["id"], story="The next day Kenji climbs up. Aiko laughs.")
    response = post(person, f"/api/storyboards/{two['id']}/draft/")
    assert response.status_code == 200
    assert [c["name"] for c in seen["characters"]] == ["Aiko", "Kenji"]
    assert seen["context"].places == [{"name": "Rooftop", "description": "the school rooftop"}]
    assert seen["context"].last_beats[-2:] == [
        "Aiko waits. Aiko: He is late.",
        "Kenji runs up the stairs.",
    ]
    drafted = response.json()
    assert [c["name"] for c in drafted["characters"]] == ["Aiko", "Kenji"]
    assert drafted["characters"][0]["outfits"][0]["name"] == "winter coat"  # kept


def test_a_standalone_comic_drafts_without_last_beats(person, user, monkeypatch):
    board = factories.storyboard(user, panels=[])
    assert storyboards.last_beats(storyboard=board) == []
    made = new_series(person)
    assert (
        storyboards.last_beats(
            storyboard=Storyboard.objects.get(pk=chapter(person, made["id"])["id"])
        )
        == []
    )


def test_chapter_sheet_urls_are_the_chapters_own(person, user, account, render_sheet):
    made = new_series(person)
    one = first_chapter(person, made["id"])
    render_sheet(one, "Aiko")
    two = chapter(person, made["id"])
    # Chapter two has a copy of Aiko's sheet of its own, on which the sheet endpoints
    # work as on any sheet.
    own, copy = one.sheets.get(name="Aiko"), Storyboard.objects.get(pk=two["id"]).sheets.get()
    assert copy.name == "Aiko" and copy.pk != own.pk and copy.hash == own.hash
    url = f"/api/storyboards/{two['id']}/characters/{quote('Aiko')}/sheet/"
    assert person.delete(url).status_code == 204
    assert one.sheets.filter(name="Aiko").exists()  # chapter one keeps its own


def translate(person, board_id: int, lang: str, title: str):
    """A translation of a chapter of PANELS: its title and Aiko's line."""
    body = {"title": title, "panels": [{"index": 2, "dialogue": ["Il est en retard."]}]}
    response = person.put(
        f"/api/storyboards/{board_id}/translations/{lang}/", body, content_type="application/json"
    )
    assert response.status_code == 200, response.content


def test_a_chapter_is_in_the_language_of_the_chapter_before(person):
    made = new_series(person)
    one = chapter(person, made["id"], story="アイコは屋上で待っている。")
    assert one["language"] == "ja"  # the first chapter's is guessed from its story
    patched = person.patch(
        f"/api/storyboards/{one['id']}/", {"language": "fr"}, content_type="application/json"
    )
    assert patched.json()["language"] == "fr"
    two = chapter(person, made["id"], story="Aiko waits on the roof.")
    assert two["language"] == "fr"  # not guessed from its English story: the series'


def test_the_whole_series_downloads_in_a_language_every_drawn_chapter_has(person, user):
    made = new_series(person)
    one = first_chapter(person, made["id"])
    two = Storyboard.objects.get(pk=chapter(person, made["id"], title="Chapter two")["id"])
    chapter(person, made["id"])  # chapter three: nothing drawn, no translation, left out
    storyboards.update_storyboard(storyboard=two, panels=PANELS)
    factories.keep(one)
    factories.keep(two)
    base = f"/api/series/{made['id']}/export/"
    plain = person.get(f"{base}?format=cbz")
    assert "<LanguageISO>en</LanguageISO>" in chapter_info(plain, 0)
    translate(person, one.pk, "fr", "Le toit")
    assert person.get(f"/api/series/{made['id']}/").json()["languages"] == ["en"]

    missing = person.get(f"{base}?format=pdf&lang=fr")
    assert missing.status_code == 404 and missing.json()["error"] == "no_such_translation"
    assert "Chapter 2 ('Chapter two')" in missing.json()["detail"]

    translate(person, two.pk, "fr", "Le lendemain")
    assert person.get(f"/api/series/{made['id']}/").json()["languages"] == ["en", "fr"]
    response = person.get(f"{base}?format=cbz&lang=FR")
    assert 'filename="rooftops-fr.zip"' in response["Content-Disposition"]
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        assert archive.namelist() == ["001-chapter-one-fr.cbz", "002-chapter-two-fr.cbz"]
        with zipfile.ZipFile(io.BytesIO(archive.read("001-chapter-one-fr.cbz"))) as cbz:
            info = cbz.read("ComicInfo.xml").decode()
    assert "<Title>Le toit</Title><Series>Rooftops</Series><Number>1</Number>" in info
    assert "<LanguageISO>fr</LanguageISO>" in info
    pdf = person.get(f"{base}?format=pdf&lang=fr")
    assert 'filename="rooftops-fr.pdf"' in pdf["Content-Disposition"]
    assert pdf_pages(pdf) == pdf_pages(person.get(f"{base}?format=pdf"))

    page = person.get(f"/series/{made['id']}/").content.decode()
    assert 'data-lang="fr"' in page and "French (PDF)" in page


def chapter_info(response, position: int) -> str:
    """The ComicInfo.xml of the chapter at `position` in a whole series' CBZ download."""
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        inner = archive.read(archive.namelist()[position])
    with zipfile.ZipFile(io.BytesIO(inner)) as cbz:
        return cbz.read("ComicInfo.xml").decode()


def comic_info(response) -> str:
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        return archive.read("ComicInfo.xml").decode()


def pdf_pages(response) -> int:
    data = b"".join(response.streaming_content)
    assert data.startswith(b"%PDF")
    return factories.pdf_page_count(data)


# --- the pages ----------------------------------------------------------------------------------


def test_the_series_pages_start_a_series_and_its_chapters(person, user, make_user, client):
    refused = person.post("/series/new/", {"title": "", "style": "manga"})
    assert refused.status_code == 200 and b"This field is required." in refused.content
    made = person.post("/series/new/", {"title": "Rooftops", "style": "noir"})
    series_id = int(made["Location"].rstrip("/").split("/")[-1])
    page = person.get(made["Location"])
    assert page.status_code == 200 and b"Start chapter 1" in page.content

    story = 'Aiko waits on the roof. "Late again," Aiko said.'
    started = person.post(f"/series/{series_id}/chapters/new/", {"story": story, "title": ""})
    chapter_id = int(started["Location"].split("/")[2])
    assert started["Location"] == f"/comics/{chapter_id}/characters/"
    drafted = person.get(f"/api/storyboards/{chapter_id}/").json()
    assert drafted["style"] == "noir" and drafted["panels"]  # drafted from its story
    assert [c["name"] for c in drafted["characters"]] == ["Aiko"]
    wizard = person.get(started["Location"])
    assert b"Rooftops, chapter 1" in wizard.content
    reader = person.get(f"/comics/{chapter_id}/read/")
    assert b"Rooftops \xc2\xb7 chapter 1 of 1" in reader.content

    client.force_login(make_user())
    assert client.get(f"/series/{series_id}/").status_code == 404
    assert client.post(f"/series/{series_id}/chapters/new/", {"story": "x"}).status_code == 404


def test_the_dashboard_lists_series_and_each_chapters_series_in_its_one_comics_query(person):
    """The comics come in comics_of's one query, their series joined to it: no query per
    chapter, however many chapters there are."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    made = new_series(person, title="Rooftops")
    for _ in range(4):
        chapter(person, made["id"])
    with CaptureQueriesContext(connection) as seen:
        page = person.get("/").content.decode()
    series_reads = [q["sql"] for q in seen.captured_queries if 'FROM "mangagen_series"' in q["sql"]]
    assert len(series_reads) == 1, series_reads  # the series list; the comics join theirs
    comic_reads = [
        q["sql"] for q in seen.captured_queries if 'FROM "mangagen_storyboard"' in q["sql"]
    ]
    assert len(comic_reads) == 1, comic_reads
    assert page.count(f'href="/series/{made["id"]}/"') >= 4  # each chapter links its series
    assert "Rooftops, chapter 4" in page


# --- what the series endpoints read -------------------------------------------------------------


def queries_for(person, url: str) -> int:
    """The database queries one GET of `url` makes (a 200), counted on a second GET: what
    a first request alone does (a cache filled, a session saved) is not counted."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    person.get(url)
    with CaptureQueriesContext(connection) as seen:
        response = person.get(url)
    assert response.status_code == 200, response.content
    return len(seen.captured_queries)


def drawn_chapter(person, series_id):
    """A next chapter (with the cast and places carried), its panels, kept art for them and
    a French translation: every row the series reads per chapter."""
    board = Storyboard.objects.get(pk=chapter(person, series_id)["id"])
    storyboards.update_storyboard(storyboard=board, panels=PANELS)
    factories.keep(board)
    translate(person, board.pk, "fr", "Le toit")
    return board


def drawn_series(person, title="Rooftops", chapters=2):
    """A series of `chapters` drawn chapters, the first with the cast's sheets."""
    made = new_series(person, title=title)
    one = first_chapter(person, made["id"])
    factories.keep(one)
    translate(person, one.pk, "fr", "Le toit")
    for _ in range(chapters - 1):
        drawn_chapter(person, made["id"])
    return made


def test_a_series_reads_the_same_queries_however_many_chapters_it_has(person, user):
    made = drawn_series(person, chapters=2)
    url = f"/api/series/{made['id']}/"
    two = queries_for(person, url)
    for _ in range(4):
        drawn_chapter(person, made["id"])
    assert len(person.get(url).json()["chapters"]) == 6
    assert queries_for(person, url) == two


def test_the_series_list_reads_the_same_queries_however_many_series_and_chapters(person, user):
    drawn_series(person, title="Rooftops", chapters=3)
    one = queries_for(person, "/api/series/")
    drawn_series(person, title="Stairs", chapters=3)
    drawn_series(person, title="Station", chapters=4)
    listed = person.get("/api/series/").json()
    assert [len(s["chapters"]) for s in listed] == [4, 3, 3]
    assert queries_for(person, "/api/series/") == one


def test_a_series_lists_its_chapters_languages_cast_and_places_as_its_latest_chapters_have_them(
    person, user, account, render_sheet
):
    """Characters, sheets in use (and a stale one), places (one renamed in its case),
    translations and kept art (one take for a picture no panel has any more)."""
    made = new_series(person)
    one = first_chapter(person, made["id"])
    aiko = render_sheet(one, "Aiko")
    coat = render_sheet(one, "Aiko", outfit="winter coat")
    render_sheet(one, "Kenji")
    factories.keep(one, indices=[1, 3])
    translate(person, one.pk, "fr", "Le toit")

    two = Storyboard.objects.get(pk=chapter(person, made["id"], title="The station")["id"])
    ren_waves = {
        "description": "Ren waves.",
        "characters": ["Ren"],
        "dialogue": [{"speaker": "Ren", "text": "Over here!"}],
    }
    storyboards.update_storyboard(
        storyboard=two,
        characters=[CAST[0], {"name": "Ren", "description": "tall"}],
        places=[
            {"name": "rooftop", "description": "the school rooftop"},
            {"name": "Station", "description": "a small station"},
        ],
        panels=[{"description": "The station.", "place": "Station"}, ren_waves],
    )
    ren = render_sheet(two, "Ren")
    factories.keep(two)
    factories.keep(two, indices=[2])  # a second take of panel two
    storyboards.update_storyboard(  # panel one's kept take no longer shows
        storyboard=two,
        panels=[{"description": "The station at night.", "place": "Station"}, ren_waves],
    )
    translate(person, two.pk, "fr", "La gare")
    translate(person, two.pk, "de", "Der Bahnhof")

    three = Storyboard.objects.get(pk=chapter(person, made["id"])["id"])
    storyboards.update_storyboard(
        storyboard=three,
        characters=[{"name": "Kenji", "description": "spiky blue hair"}],  # his sheet is stale
        places=[],
        panels=[],
    )

    data = person.get(f"/api/series/{made['id']}/").json()
    series = Series.objects.get(pk=made["id"])
    assert list(data) == [
        "id",
        "title",
        "style",
        "chapters",
        "languages",
        "cast",
        "places",
        "created_at",
        "updated_at",
    ]
    assert (data["id"], data["title"], data["style"]) == (series.pk, "Rooftops", "shoujo")
    assert data["chapters"] == [
        {
            "number": 1,
            "storyboard": one.pk,
            "title": "Chapter one",
            "language": "en",
            "panels": 3,
            "kept": 2,
        },
        {
            "number": 2,
            "storyboard": two.pk,
            "title": "The station",
            "language": "en",
            "panels": 2,
            "kept": 1,
        },
        {
            "number": 3,
            "storyboard": three.pk,
            "title": "Rooftops — Chapter 3",
            "language": "en",
            "panels": 0,
            "kept": 0,
        },
    ]
    assert data["languages"] == ["en", "fr"]  # chapter three, not drawn, is left out
    assert data["cast"] == [
        {"name": "Aiko", "chapter": 2},
        {"name": "Kenji", "chapter": 3},
        {"name": "Ren", "chapter": 2},
    ]
    assert data["places"] == [{"name": "rooftop", "chapter": 2}, {"name": "Station", "chapter": 2}]
    assert [s for s in person.get("/api/series/").json() if s["id"] == series.pk] == [data]

    # What the next chapter starts with: each character as their latest chapter has them,
    # with that chapter's sheets in use.
    cast = series_cast(series=series)
    assert [(c.character.name, c.character.storyboard_id, c.chapter) for c in cast.characters] == [
        ("Aiko", two.pk, 2),
        ("Kenji", three.pk, 3),
        ("Ren", two.pk, 2),
    ]
    assert [{o: s.hash for o, s in c.sheets.items()} for c in cast.characters] == [
        {"": aiko.hash, "winter coat": coat.hash},
        {},
        {"": ren.hash},
    ]
    assert all(s.storyboard_id == two.pk for s in cast.characters[0].sheets.values())
    assert [(p.place.name, p.place.storyboard_id, p.chapter) for p in cast.places] == [
        ("rooftop", two.pk, 2),
        ("Station", two.pk, 2),
    ]
