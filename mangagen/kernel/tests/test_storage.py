"""Every file in the media storage, on local disk and in an S3 bucket (issue #28), and
the file bounds of the hardening issue (#23 §2).

Tests that take `media` run twice: on `STORAGE_BACKEND=local` and on s3, against
the local S3 server over real HTTP; on s3 each also proves nothing was written
to MEDIA_ROOT.
"""

import io
import struct
import uuid
import zlib
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
from django.utils import timezone
from PIL import Image, ImageCms

from ledger.models import Hold
from mangagen.characters.models import CharacterSheet
from mangagen.jobs import selectors, services
from mangagen.jobs.lettered_images import lettered_cache_key
from mangagen.jobs.models import Job
from mangagen.orchestration import comic_deletion as deletion
from mangagen.orchestration import pruning as retention
from mangagen.pages import builds
from mangagen.pages.models import PageBuild
from mangagen.storyboards.models import KeptArt
from tests.support import factories
from tests.support.ledger_invariants import assert_ledger_invariants
from tests.support.pages import PANELS, download, edit, page_png
from tests.support.pictures import picture

# Every test renders instantly; `media`, asked for after, picks the storage.

CAST = [{"name": "Aiko", "description": "red scarf"}, {"name": "Kenji"}]


pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("instant_renders"),
    pytest.mark.board(characters=CAST, panels=PANELS),
]


def rename(board, title: str):
    from mangagen.storyboards import services as storyboards

    return storyboards.update_storyboard(storyboard=board, title=title)


def upload(client, board, name: str, data: bytes):
    """PUT a picture as the character's sheet, as the Characters step does."""
    image = SimpleUploadedFile("me.png", data, content_type="image/png")
    return client.put(
        f"/api/storyboards/{board.pk}/characters/{name}/sheet/",
        data=encode_multipart(BOUNDARY, {"image": image}),
        content_type=MULTIPART_CONTENT,
    )


# --- where the files are ---------------------------------------------------------------------


def test_renders_kept_art_sheets_pages_and_exports_live_in_the_storage(
    media, account, board, user, client, run
):
    job = run.finish(run.generate(user, board))
    key = builds.comic_of(storyboard=board).key  # (a sheet would change the pictures')
    client.force_login(user)
    panel = client.get(selectors.image_url(job.panels.get(index=2), job))
    assert panel.status_code == 200 and panel.content[:4] == b"\x89PNG"
    assert page_png(client, board.pk)[:4] == b"\x89PNG"
    for fmt, magic in (("pdf", b"%PDF"), ("cbz", b"PK"), ("webtoon", b"\x89PNG")):
        response, data = download(client, board.pk, fmt)
        assert response.status_code == 200 and data.startswith(magic)
    assert upload(client, board, "Aiko", picture(1)).status_code == 200
    sheet = client.get(f"/api/storyboards/{board.pk}/").json()["characters"][0]["sheet"]
    assert client.get(sheet["image_url"]).content[:4] == b"\x89PNG"

    names = media.names()
    assert len([n for n in names if n.startswith(f"renders/{job.pk}/")]) == 3
    assert len([n for n in names if n.startswith(f"renders/kept/{board.pk}/")]) == 3
    assert len([n for n in names if n.startswith(f"sheets/{board.pk}/")]) == 1
    built = {n.rsplit("/", 1)[1] for n in names if n.startswith(f"pages/{board.pk}/{key}/")}
    assert {"page-001.png", "comic.pdf", "comic.cbz", "webtoon.png"} <= built


def test_a_comic_keeps_the_page_builds_of_its_last_few_versions(
    media, account, board, user, client, run
):
    """Forty title edits, each followed by reading the pages, left forty versions'
    builds: a comic now keeps its PAGE_BUILDS_KEPT most recently built."""
    run.finish(run.generate(user, board))
    client.force_login(user)
    for n in range(8):
        board = rename(board, f"Rooftops {n}")
        page_png(client, board.pk)
        if n == 0:
            download(client, board.pk, "pdf")  # an export of an old version goes too
    keys = {name.split("/")[2] for name in media.names(f"pages/{board.pk}")}
    assert len(keys) == builds.PAGE_BUILDS_KEPT
    assert builds.comic_of(storyboard=board).key in keys, "the version shown stays"
    assert set(PageBuild.objects.filter(storyboard=board).values_list("key", flat=True)) == keys


def test_a_request_still_reading_an_old_version_gets_whole_files(media, account, board, user, run):
    """A PDF of the comic as it was before an edit reads its pages while newer
    versions are built and the old files go: it draws them again."""
    run.finish(run.generate(user, board))
    before = builds.comic_of(storyboard=board)
    first_page = builds.page_png(before, 1)
    for n in range(builds.PAGE_BUILDS_KEPT + 1):
        builds.page_png(builds.comic_of(storyboard=rename(board, f"New title {n}")), 1)
    assert not [n for n in media.names(before.folder)], "the old version's files went"
    assert builds.image_png(before, "page-001.png") == first_page
    assert builds.built(before, "again.bin", lambda: b"x", estimate=0.01) == b"x"


# --- drawing is bounded per person ---------------------------------------------------------------


@pytest.fixture
def one_minute(monkeypatch):
    """The drawing budget's clock stays in one minute: a test that spends the budget
    and is refused must not see the minute turn between the two."""
    from mangagen.kernel import quotas

    monkeypatch.setattr(quotas, "clock", lambda: 1_800_000_030.0)


def test_drawing_is_throttled_per_person_and_what_is_built_is_still_served(
    account, board, user, client, run, make_user, settings, one_minute
):
    run.finish(run.generate(user, board))
    client.force_login(user)
    page_png(client, board.pk)  # drawn: the budget is spent at once
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = 0.001
    page_png(client, board.pk)  # built already: served
    refused = client.get(f"/api/storyboards/{board.pk}/export/?format=pdf")
    assert refused.status_code == 429 and refused.json()["error"] == "drawing_budget"
    assert 1 <= int(refused["Retry-After"]) <= 60
    rename(board, "Another title")
    pages = client.get(f"/api/storyboards/{board.pk}/pages/").json()
    page = client.get(pages["pages"][0]["image_url"])
    assert page.status_code == 429 and page.json()["error"] == "drawing_budget"
    # Per person: someone else draws their own comic.
    other = make_user("other")
    factories.funded_account(other, key="seed-other")
    theirs = factories.storyboard(other, panels=[{"description": "Night."}])
    run.finish(run.generate(other, theirs))
    client.force_login(other)
    assert page_png(client, theirs.pk)[:4] == b"\x89PNG"


@pytest.fixture
def redis_cache(settings):
    """The cache on the real Redis (what production runs), under a prefix of its own."""
    import redis

    prefix = f"test-{uuid.uuid4().hex}"
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": settings.REDIS_URL,
            "KEY_PREFIX": prefix,
        }
    }
    client = redis.Redis.from_url(settings.REDIS_URL)
    yield lambda: [key for key in client.scan_iter(f"{prefix}:*")], client
    for key in client.scan_iter(f"{prefix}:*"):
        client.delete(key)


def test_lettered_panels_take_one_cache_entry_per_image_however_often_the_text_changes(
    account, board, user, client, run, redis_cache
):
    """300 dialogue edits of one kept panel, each followed by viewing it, grew Redis by
    10.4 MB: one entry per text. Now one per image, overwritten."""
    keys, redis = redis_cache
    job = run.finish(run.generate(user, board))
    client.force_login(user)
    url = selectors.image_url(job.panels.get(index=2), job)
    seen = set()
    for n in range(12):
        edit(board, {2: {"dialogue": [{"speaker": "Aiko", "text": f"Line number {n}"}]}})
        response = client.get(url)
        assert response.status_code == 200
        seen.add(response.content)
    assert len(seen) == 12, "each edit is lettered anew"
    lettered = [key for key in keys() if b"lettered-panel" in key]
    # The worker drew each delivered panel ahead (three), and the view replaced panel
    # two's entry each time.
    assert len(lettered) == 3
    assert sum(redis.memory_usage(key) for key in lettered) < 3 * 2 * len(response.content)


def test_lettering_not_in_the_cache_is_throttled_per_person(
    account, board, user, client, run, settings, one_minute
):
    job = run.finish(run.generate(user, board))
    client.force_login(user)
    url = selectors.image_url(job.panels.get(index=2), job)
    edit(board, {2: {"dialogue": [{"speaker": "Aiko", "text": "One."}]}})
    drawn = client.get(url)
    assert drawn.status_code == 200  # drawn: the budget is spent
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = 0.001
    # The budget is checked before the cache is read (reading it decodes the image's
    # whole entry): only a browser's own copy is still answered.
    assert client.get(url, headers={"If-None-Match": drawn["ETag"]}).status_code == 304
    cached = client.get(url)
    assert cached.status_code == 429 and cached.json()["error"] == "drawing_budget"
    edit(board, {2: {"dialogue": [{"speaker": "Aiko", "text": "Two."}]}})
    refused = client.get(url)
    assert refused.status_code == 429 and refused.json()["error"] == "drawing_budget"
    assert refused["Retry-After"]


# --- sheets ----------------------------------------------------------------------------------


@pytest.fixture
def cast_board(user):
    """Two panels, one per character: a sheet of Aiko is in panel one's art hash."""
    panels = [{"description": f"{c['name']} waits.", "characters": [c["name"]]} for c in CAST]
    return factories.storyboard(user, characters=CAST, panels=panels)


def test_a_character_keeps_the_newest_few_pictures_but_never_one_a_live_job_uses(
    media, account, cast_board, user, client, run, django_capture_on_commit_callbacks
):
    """30 uploads for one character left 30 files."""
    client.force_login(user)
    assert upload(client, cast_board, "Aiko", picture(0)).status_code == 200
    used = CharacterSheet.objects.get()
    job = run.generate(user, cast_board)  # panel one is drawn from that sheet
    assert job.panels.get(index=1).spec["sheets"] == {"Aiko": used.hash}
    for n in range(1, 8):
        with django_capture_on_commit_callbacks(execute=True):
            assert upload(client, cast_board, "Aiko", picture(n)).status_code == 200
    pictured = CharacterSheet.objects.filter(storyboard=cast_board).exclude(image="")
    assert pictured.count() == 4  # the three newest, and the one the live job uses
    assert used.pk in {s.pk for s in pictured}
    assert sorted(media.names(f"sheets/{cast_board.pk}")) == sorted(s.image.name for s in pictured)
    services.cancel_job(job=job)
    with django_capture_on_commit_callbacks(execute=True):
        assert upload(client, cast_board, "Aiko", picture(9)).status_code == 200
    assert not CharacterSheet.objects.filter(pk=used.pk).exists(), "no job uses it now"
    assert len(media.names(f"sheets/{cast_board.pk}")) == 3


def test_a_persons_own_pictures_are_capped_in_bytes(media, cast_board, user, client, settings):
    client.force_login(user)
    assert upload(client, cast_board, "Aiko", picture(0)).status_code == 200
    first = CharacterSheet.objects.get()
    assert first.bytes == len(media_bytes(first))
    settings.PICTURE_BYTES_PER_PERSON = first.bytes * 3 // 2
    refused = upload(client, cast_board, "Kenji", picture(1))
    assert refused.status_code == 400 and refused.json()["error"] == "sheet_uploads_full"
    assert CharacterSheet.objects.count() == 1, "nothing changed"
    assert media.names("sheets") == [first.image.name]


def media_bytes(sheet) -> bytes:
    with sheet.image.open("rb") as handle:
        return handle.read()


def png_chunks(data: bytes) -> list[bytes]:
    kinds, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kinds.append(data[offset + 4 : offset + 8])
        offset += 12 + length
    return kinds


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
def test_an_uploaded_picture_keeps_no_colour_profile_or_other_metadata(
    fmt, cast_board, user, client
):
    from PIL import PngImagePlugin

    profile = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    exif = Image.Exif()
    exif[0x010E] = "uploader's words"  # ImageDescription
    options = {"icc_profile": profile, "exif": exif.tobytes()}
    if fmt == "PNG":
        text = PngImagePlugin.PngInfo()
        text.add_text("Comment", "uploader's words")
        text.add_itxt("XML:com.adobe.xmp", "<x:xmpmeta/>")
        options["pnginfo"] = text
    sent = picture(0, fmt=fmt, **options)
    assert profile in sent or zlib.compress(profile)[:2] in sent  # it carries one
    client.force_login(user)
    assert upload(client, cast_board, "Aiko", sent).status_code == 200
    kept = media_bytes(CharacterSheet.objects.get())
    assert set(png_chunks(kept)) <= {b"IHDR", b"IDAT", b"IEND"}
    assert "icc_profile" not in Image.open(io.BytesIO(kept)).info


# --- deleting a comic, retention ---------------------------------------------------------------


def test_deleting_a_comic_removes_every_file_of_it(
    media, account, board, user, client, run, django_capture_on_commit_callbacks
):
    job = run.generate(user, board)
    run.render()
    with django_capture_on_commit_callbacks(execute=True):
        services.redo_panel(job=job, index=1)  # two takes of panel one
    run.render()
    run.finish(job)
    client.force_login(user)
    images = [selectors.image_url(p, job) for p in job.panels.all()]
    assert all(client.get(url).status_code == 200 for url in images)  # lettered: cached
    download(client, board.pk, "pdf")
    assert upload(client, board, "Aiko", picture(0)).status_code == 200
    other = factories.storyboard(user, title="Another", panels=[{"description": "Rain."}])
    run.finish(run.generate(user, other))
    names = [p.image.name for p in job.panels.all()] + list(
        KeptArt.objects.filter(storyboard=board).values_list("image", flat=True)
    )
    assert all(cache.get(lettered_cache_key(name)) for name in names[:3])
    before = set(media.names())

    with django_capture_on_commit_callbacks(execute=True):
        deletion.delete_comic(storyboard=board)

    left = set(media.names())
    mine = (f"renders/{job.pk}/", f"renders/kept/{board.pk}/", f"pages/{board.pk}/")
    mine += (f"sheets/{board.pk}/",)
    assert left == {n for n in before if not n.startswith(mine)}, "the other comic's stay"
    assert len(before - left) >= 4 + 4 + 2 + 1  # renders (a redo), kept takes, pages, sheet
    assert not any(cache.get(lettered_cache_key(name)) for name in names)
    assert not Job.objects.filter(pk=job.pk).exists()


def test_an_ended_jobs_own_renders_go_a_day_after_and_its_page_shows_the_kept_copies(
    media, account, board, user, client, run, enqueued, django_capture_on_commit_callbacks
):
    ended = run.finish(run.generate(user, board))
    recent = run.generate(user, factories.storyboard(user, panels=[{"description": "Snow."}]))
    run.render()
    with django_capture_on_commit_callbacks(execute=True):
        services.cancel_job(job=recent)
    live = run.generate(user, factories.storyboard(user, panels=[{"description": "Sun."}]))
    run.render()
    Job.objects.filter(pk=ended.pk).update(finished_at=timezone.now() - timedelta(days=2))
    kept_before = media.names(f"renders/kept/{board.pk}")

    counts = retention.prune()

    assert counts["render files of ended jobs"] == 3
    assert media.names(f"renders/{ended.pk}") == []
    assert media.names(f"renders/{recent.pk}") != [], "ended an hour ago: kept a day"
    assert media.names(f"renders/{live.pk}") != []
    assert media.names(f"renders/kept/{board.pk}") == kept_before
    client.force_login(user)
    body = client.get(f"/api/jobs/{ended.pk}/").json()
    for panel in body["panels"]:
        assert "/renders/kept/" in panel["image_url"]
        assert client.get(panel["image_url"]).content[:4] == b"\x89PNG"
    assert retention.prune()["render files of ended jobs"] == 0


# --- deleting is one transaction -----------------------------------------------------------------


@pytest.mark.postgres  # row locks on two connections
@pytest.mark.django_db(transaction=True)
def test_a_generate_racing_a_deletion_leaves_no_hold_pending(
    user, board, instant_renders, enqueued
):
    """A Generate between the deletion's cancelling and its delete started a job whose
    hold stayed pending for hours; now it runs before the lock, and is cancelled."""
    from tests.support.concurrency import meanwhile

    factories.funded_account(user)
    with meanwhile(
        lambda: services.generate(user=user, storyboard=board)[0], table="mangagen_storyboard"
    ) as done:
        deletion.delete_comic(storyboard=board)
    assert isinstance(done[0], Job), done
    assert not Hold.objects.filter(state=Hold.State.PENDING).exists()
    assert_ledger_invariants()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_generate_waiting_for_a_deleted_comic_answers_404(user, board, client, enqueued):
    from tests.support.concurrency import meanwhile

    factories.funded_account(user)
    client.force_login(user)
    with meanwhile(
        lambda: deletion.delete_comic(storyboard=board), table="mangagen_storyboard"
    ) as done:
        response = client.post(f"/api/storyboards/{board.pk}/generate/")
    assert done == [None]
    assert response.status_code == 404 and response.json()["error"] == "not_found"
    assert not Hold.objects.exists()


def test_an_image_whose_file_left_storage_answers_404(media, account, board, user, client, run):
    from django.core.files.storage import default_storage

    job = run.finish(run.generate(user, board))
    panel = job.panels.get(index=3)
    edit(board, {3: {"caption": "Not drawn yet with this text."}})  # not in the cache
    default_storage.delete(panel.image.name)
    client.force_login(user)
    assert client.get(selectors.image_url(panel, job)).status_code == 404
