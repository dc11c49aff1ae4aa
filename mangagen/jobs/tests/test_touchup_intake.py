"""A touch-up's request side (issue #45, items 2 and 3): money before masks, a mask judged
from its header and decoded once against the drawing budget, masks stored in their job's
folder (which the ended job's prune and the comic's deletion empty), and counted in
PICTURE_BYTES_PER_PERSON. tests/stack/test_hardening_stack.py runs the memory and the
files on the real server."""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone
from PIL import Image, ImageFile

from mangagen.characters.picture_budget import stored_picture_bytes
from mangagen.jobs import touchups
from mangagen.jobs.models import Job, JobState, TouchUp
from mangagen.jobs.retention import prune_ended_job_renders
from mangagen.kernel import quotas
from mangagen.orchestration.comic_deletion import delete_comic
from tests.support import factories
from tests.support.factories import balance, funded_account

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("instant_renders", "enqueued")]

TAKE = (96, 96)  # factories.keep's pictures


@pytest.fixture
def kept(board):
    factories.keep(board)
    return board


def mask_png(size=TAKE, *, mode="L", box=None) -> bytes:
    """A painted mask: black, white over `box` (left, top, right, bottom) or its top
    right quarter."""
    image = Image.new(mode, size, 0)
    w, h = size
    image.paste((255,) * len(mode) if mode != "L" else 255, box or (w // 2, 0, w, h // 2))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def post_mask(person, board, data: bytes, index: int = 1):
    upload = io.BytesIO(data)
    upload.name = "mask.png"
    return person.post(
        f"/api/storyboards/{board.pk}/panels/{index}/touchup/", {"mask": upload, "prompt": "sky"}
    )


@pytest.fixture
def decodes(monkeypatch):
    """Every picture Pillow decodes in the test: its size."""
    found: list[tuple[int, int]] = []
    original = ImageFile.ImageFile.load

    def counted(self):
        if getattr(self, "tile", None):  # not decoded yet
            found.append(self.size)
        return original(self)

    monkeypatch.setattr(ImageFile.ImageFile, "load", counted)
    return found


# --- money before masks ---------------------------------------------------------------------


def test_without_a_credit_the_mask_is_not_read(person, user, kept, decodes):
    funded_account(user, 0)
    answer = post_mask(person, kept, mask_png((6000, 6000)))
    assert answer.status_code == 402, answer.content
    assert answer.json()["error"] == "insufficient_credits"
    assert decodes == []
    assert not TouchUp.objects.exists() and not Job.objects.exists()


def test_a_box_without_a_credit_is_402(person, user, kept):
    funded_account(user, 0)
    answer = person.post(
        f"/api/storyboards/{kept.pk}/panels/1/touchup/",
        {"box": [0.1, 0.1, 0.2, 0.2]},
        content_type="application/json",
    )
    assert answer.status_code == 402


# --- the header, then one decoding ------------------------------------------------------------


@pytest.mark.parametrize(
    "size",
    [(6324, 6324), (192, 192), (96, 48), (96, 97 + 10)],
    ids=["40 Mpx", "larger than the take", "another shape", "taller"],
)
def test_a_mask_not_of_the_take_s_shape_or_size_is_refused_from_its_header(
    person, account, kept, decodes, size
):
    answer = post_mask(person, kept, mask_png(size))
    assert answer.status_code == 400 and answer.json()["error"] == "invalid"
    assert answer.json()["detail"] == "The mask is too large."
    assert [s for s in decodes if s == size] == []  # never decoded
    assert balance(account) == (10, 0) and not TouchUp.objects.exists()


@pytest.mark.parametrize("mode", ["L", "RGB", "RGBA", "1"])
def test_a_painted_mask_is_decoded_once_and_is_the_region(person, account, kept, decodes, mode):
    answer = post_mask(person, kept, mask_png((48, 48), mode=mode, box=(24, 0, 48, 24)))
    assert answer.status_code == 202, answer.content
    assert decodes == [(48, 48)]  # the upload, once; the stored mask never again
    touch = TouchUp.objects.get()
    assert touch.box == [0.5, 0.0, 0.5, 0.5]
    with touch.mask.open("rb") as handle:
        stored = Image.open(handle)
        assert stored.size == TAKE and stored.mode == "L"
    assert balance(account) == (9, 1)


def test_a_transparent_region_is_kept_not_redrawn(person, account, kept):
    image = Image.new("RGBA", TAKE, (255, 255, 255, 0))  # white but transparent: kept
    image.paste((255, 255, 255, 255), (0, 0, 48, 48))
    out = io.BytesIO()
    image.save(out, format="PNG")
    assert post_mask(person, kept, out.getvalue()).status_code == 202
    assert TouchUp.objects.get().box == [0.0, 0.0, 0.5, 0.5]


def test_decoding_a_mask_is_drawing_counted_in_the_budget(person, user, account, kept, settings):
    settings.DRAWING_CPU_SECONDS_PER_MINUTE = 1
    quotas._add(user.pk, 1000, quotas.clock())  # the minute's budget spent
    answer = post_mask(person, kept, mask_png())
    assert answer.status_code == 429 and answer.json()["error"] == "drawing_budget"
    assert balance(account) == (10, 0) and not TouchUp.objects.exists()


# --- where masks live, and what counts them -----------------------------------------------------


def files_under(folder: str) -> list[str]:
    root = Path(default_storage.location) / folder
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_a_mask_is_stored_in_its_job_s_folder_and_pruned_with_it(person, account, kept):
    assert post_mask(person, kept, mask_png()).status_code == 202
    touch = TouchUp.objects.select_related("attempt").get()
    job = touch.attempt.job
    assert touch.mask.name.startswith(f"renders/{job.pk}/touchup-01-")
    assert touch.mask_bytes == default_storage.size(touch.mask.name) > 0
    assert stored_picture_bytes(owner_id=job.owner_id) == touch.mask_bytes
    person.post(f"/api/jobs/{job.pk}/cancel/")
    job.refresh_from_db()
    assert job.state == JobState.CANCELLED
    prune_ended_job_renders(ended_before=timezone.now() + timedelta(days=2))
    assert not default_storage.exists(touch.mask.name)
    touch.refresh_from_db()
    assert touch.mask.name == "" and touch.mask_bytes == 0
    assert stored_picture_bytes(owner_id=job.owner_id) == 0


def test_cancelled_touch_ups_leave_nothing_once_their_comic_is_deleted(
    person, account, kept, django_capture_on_commit_callbacks
):
    names = []
    for n in range(3):
        answer = person.post(
            f"/api/storyboards/{kept.pk}/panels/1/touchup/",
            {"box": [0.1 + n / 10, 0.2, 0.3, 0.4]},
            content_type="application/json",
        )
        assert answer.status_code == 202, answer.content
        names.append(TouchUp.objects.get(attempt__job_id=answer.json()["job"]).mask.name)
        person.post(f"/api/jobs/{answer.json()['job']}/cancel/")
    assert all(default_storage.exists(name) for name in names)
    with django_capture_on_commit_callbacks(execute=True):
        delete_comic(storyboard=kept)
    assert not any(default_storage.exists(name) for name in names)
    assert files_under("renders") == []


def test_masks_count_in_the_picture_budget(person, account, kept, settings):
    assert post_mask(person, kept, mask_png()).status_code == 202
    used = TouchUp.objects.get().mask_bytes
    person.post(f"/api/jobs/{TouchUp.objects.get().attempt.job_id}/cancel/")
    settings.PICTURE_BYTES_PER_PERSON = used + 10  # no room for a second mask
    refused = post_mask(person, kept, mask_png())
    assert refused.status_code == 400, refused.content
    assert refused.json()["error"] == "sheet_uploads_full"
    assert balance(account) == (10, 0) and TouchUp.objects.count() == 1


def test_masks_stored_where_nothing_visited_them_move_to_their_job_s_folder(account, kept, user):
    """The migration's move (0021): a mask a row names goes to its job's folder with
    its size; whatever else was under renders/touchups/ (a deleted comic's) goes."""
    from importlib import import_module

    from django.apps import apps

    migration = import_module("mangagen.migrations.0021_harden_touchup_masks")
    requested = touchups.touch_up(user=user, storyboard=kept, index=1, box=[0.1, 0.1, 0.2, 0.2])
    touch = TouchUp.objects.get(attempt__job=requested.job)
    old = f"renders/touchups/{requested.job.pk}/01-0123456789abcdef.png"
    default_storage.save(old, ContentFile(b"mask"))
    default_storage.delete(touch.mask.name)
    TouchUp.objects.filter(pk=touch.pk).update(mask=old, mask_bytes=0)
    orphan = default_storage.save("renders/touchups/999/01-fedcba9876543210.png", ContentFile(b"x"))
    migration.move_masks(apps, None)
    touch.refresh_from_db()
    assert touch.mask.name.startswith(f"renders/{requested.job.pk}/touchup-01-")
    assert default_storage.open(touch.mask.name).read() == b"mask"
    assert touch.mask_bytes == 4
    assert not default_storage.exists(old) and not default_storage.exists(orphan)
    assert not (Path(default_storage.location) / "renders" / "touchups").exists()
