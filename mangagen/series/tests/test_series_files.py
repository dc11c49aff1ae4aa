"""A series' files in the media storage, on local disk and in an S3 bucket.

Place pictures, the copies a chapter or the cast and places library keeps, and
the whole series' downloads go through the storage API like every other file:
tests that take `media` run on both backends, and on s3 prove that nothing was
written to MEDIA_ROOT. Deleting a chapter takes its place pictures with it;
a copy refused half way leaves no file behind; each look of a character (its
usual one, each outfit) keeps its newest pictures, never one a live job uses.
"""

from urllib.parse import quote

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

from mangagen.characters import picture_budget
from mangagen.characters import services as sheets
from mangagen.characters.models import CharacterSheet
from mangagen.jobs import services as jobs
from mangagen.orchestration import comic_deletion as deletion
from mangagen.storyboards import services as storyboards
from mangagen.storyboards.models import Storyboard
from tests.support import factories
from tests.support.pictures import picture
from tests.support.series import CAST, PANELS, chapter, new_series, post

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("instant_renders")]


def multipart(person, url: str, data: bytes):
    image = SimpleUploadedFile("me.png", data, content_type="image/png")
    return person.put(
        url, data=encode_multipart(BOUNDARY, {"image": image}), content_type=MULTIPART_CONTENT
    )


def first_chapter(person, series_id: int) -> Storyboard:
    """Chapter one, its place's picture and Aiko's sheet uploaded through the API."""
    board = Storyboard.objects.get(pk=chapter(person, series_id, title="Chapter one")["id"])
    storyboards.update_storyboard(
        storyboard=board,
        characters=CAST,
        places=[{"name": "Rooftop", "description": "the school rooftop"}],
        panels=PANELS,
    )
    base = f"/api/storyboards/{board.pk}"
    assert multipart(person, f"{base}/places/Rooftop/picture/", picture(1)).status_code == 200
    assert multipart(person, f"{base}/characters/Aiko/sheet/", picture(2)).status_code == 200
    return board


def served(person, url: str) -> bool:
    response = person.get(url)
    return response.status_code == 200 and response.content[:4] == b"\x89PNG"


def test_a_series_place_pictures_copies_and_downloads_live_in_the_storage(media, person, user):
    made = new_series(person)
    one = first_chapter(person, made["id"])
    cast = post(person, "/api/cast/", {"storyboard": one.pk, "name": "Aiko"}).json()
    place = post(person, "/api/places/", {"storyboard": one.pk, "name": "Rooftop"}).json()
    two = chapter(person, made["id"])  # copies Aiko's sheet and the place's picture
    factories.keep(one)

    for fmt, magic in (("pdf", b"%PDF"), ("cbz", b"PK")):
        response = person.get(f"/api/series/{made['id']}/export/?format={fmt}")
        assert response.status_code == 200
        assert b"".join(response.streaming_content).startswith(magic)
    for url in (
        two["characters"][0]["sheet"]["image_url"],
        two["places"][0]["picture"]["image_url"],
        cast["sheet"]["image_url"],
        place["picture"]["image_url"],
    ):
        assert served(person, url), url

    names = media.names()
    for folder, count in (
        (f"places/{one.pk}/", 1),
        (f"places/{two['id']}/", 1),
        (f"sheets/{one.pk}/", 1),
        (f"sheets/{two['id']}/", 1),
        (f"library/{user.pk}/", 2),
    ):
        assert len([n for n in names if n.startswith(folder)]) == count, folder
    # A whole series' download is put together per request: it leaves its chapters' page
    # builds and nothing of its own.
    assert {n.split("/")[0] for n in names} == {"places", "sheets", "library", "pages", "renders"}
    assert {n.split("/")[1] for n in names if n.startswith("pages/")} == {str(one.pk)}


def test_deleting_a_chapter_takes_its_place_pictures_and_leaves_the_library_its_copies(
    media, person, user, django_capture_on_commit_callbacks
):
    made = new_series(person)
    one = first_chapter(person, made["id"])
    place = post(person, "/api/places/", {"storyboard": one.pk, "name": "Rooftop"}).json()
    two = chapter(person, made["id"])
    before = set(media.names())

    with django_capture_on_commit_callbacks(execute=True):
        assert person.delete(f"/api/storyboards/{two['id']}/").status_code == 204
    mine = (f"places/{two['id']}/", f"sheets/{two['id']}/")
    assert set(media.names()) == {n for n in before if not n.startswith(mine)}
    assert len(before) - len(media.names()) == 2  # its place's picture and Aiko's sheet

    with django_capture_on_commit_callbacks(execute=True):
        deletion.delete_comic(storyboard=one)
    assert media.names(f"places/{one.pk}") == []
    assert served(person, place["picture"]["image_url"]), "the library keeps its copy"
    assert person.get(two["places"][0]["picture"]["image_url"]).status_code == 404


def test_a_chapter_refused_half_way_through_its_copies_leaves_no_file(
    media, person, user, settings
):
    """Copies of sheets count against PICTURE_BYTES_PER_PERSON: the second copy is
    refused, the chapter is not made, and the first copy's file goes again."""
    made = new_series(person)
    one = first_chapter(person, made["id"])
    kenji = f"/api/storyboards/{one.pk}/characters/Kenji/sheet/"
    assert multipart(person, kenji, picture(3)).status_code == 200
    uploaded = {s.name: s.bytes for s in CharacterSheet.objects.filter(storyboard=one)}
    stored = picture_budget.stored_picture_bytes(owner_id=one.owner_id)
    settings.PICTURE_BYTES_PER_PERSON = stored + uploaded["Aiko"]
    before, boards = media.names(), Storyboard.objects.count()

    refused = post(person, f"/api/series/{made['id']}/chapters/", {"story": "Next."})

    assert refused.status_code == 400 and refused.json()["error"] == "sheet_uploads_full"
    assert Storyboard.objects.count() == boards
    assert media.names() == before, "Aiko's copy was stored, then deleted with the rollback"


def test_each_look_keeps_its_newest_pictures_and_any_a_live_job_draws_from(
    media, person, user, account, run, django_capture_on_commit_callbacks
):
    board = factories.storyboard(user, characters=CAST, panels=PANELS[1:2])  # Aiko in her coat
    sheet_url = f"/api/storyboards/{board.pk}/characters/Aiko/sheet/"
    coat = f"{sheet_url}?outfit={quote('winter coat')}"
    assert multipart(person, coat, picture(0)).status_code == 200
    used = CharacterSheet.objects.get(outfit="winter coat")
    job = run.generate(user, board)
    assert job.panels.get(index=1).spec["outfits"]["Aiko"]["sheet"] == used.hash

    for n in range(1, 6):
        with django_capture_on_commit_callbacks(execute=True):
            assert multipart(person, coat, picture(n)).status_code == 200
            assert multipart(person, sheet_url, picture(10 + n)).status_code == 200
    coats = CharacterSheet.objects.filter(storyboard=board, outfit="winter coat")
    usual = CharacterSheet.objects.filter(storyboard=board, outfit="")
    assert usual.count() == sheets.SHEETS_KEPT_PER_CHARACTER  # per look, not per character
    assert coats.count() == sheets.SHEETS_KEPT_PER_CHARACTER + 1, "and the one the job uses"
    assert used.pk in set(coats.values_list("pk", flat=True))
    stored = sorted(s.image.name for s in CharacterSheet.objects.filter(storyboard=board))
    assert media.names(f"sheets/{board.pk}") == stored

    jobs.cancel_job(job=job)
    with django_capture_on_commit_callbacks(execute=True):
        assert multipart(person, coat, picture(9)).status_code == 200
    assert not CharacterSheet.objects.filter(pk=used.pk).exists(), "no job uses it now"
    assert coats.count() == sheets.SHEETS_KEPT_PER_CHARACTER
