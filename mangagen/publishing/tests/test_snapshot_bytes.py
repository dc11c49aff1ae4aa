"""A reading link's snapshot is a stored picture of its owner's (issue #45, item 3):
PICTURE_BYTES_PER_PERSON counts it, and a publish past it is refused with nothing kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.storage import default_storage

from mangagen.characters.picture_budget import stored_picture_bytes
from mangagen.publishing.models import ReadingLink
from tests.support import factories

pytestmark = pytest.mark.django_db

PANELS = [{"description": "Aiko waits.", "dialogue": [{"speaker": "Aiko", "text": "Late."}]}]


def publish(person, board):
    return person.post(f"/api/storyboards/{board.pk}/publish/", {}, content_type="application/json")


def published_files() -> list[Path]:
    root = Path(default_storage.location) / "published"
    return [p for p in root.rglob("*")] if root.exists() else []


def test_a_snapshot_counts_and_one_past_the_budget_is_refused_with_nothing_kept(
    person, user, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    board = factories.storyboard(user, panels=PANELS)
    factories.keep(board)
    assert publish(person, board).status_code == 201
    link = ReadingLink.objects.get()
    on_disk = sum(p.stat().st_size for p in published_files() if p.is_file())
    assert stored_picture_bytes(owner_id=user.pk) == on_disk > 0

    other = factories.storyboard(user, title="Another", panels=PANELS)
    factories.keep(other)
    settings.PICTURE_BYTES_PER_PERSON = on_disk + on_disk // 2  # no room for a second
    refused = publish(person, other)
    assert refused.status_code == 400, refused.content
    assert refused.json()["error"] == "sheet_uploads_full"
    assert ReadingLink.objects.get() == link
    assert sum(p.stat().st_size for p in published_files() if p.is_file()) == on_disk
    assert [p for p in published_files() if p.is_dir() and not any(p.iterdir())] == []
    assert publish(person, board).status_code == 200  # again: the older one is let go


def test_a_publish_that_fails_midway_leaves_no_file_and_no_folder(
    person, user, settings, tmp_path, monkeypatch
):
    """Before: its files went, their folders stayed (published/<version>/1/en/)."""
    from mangagen.kernel.quotas import Limit, LimitReached
    from mangagen.publishing import services

    settings.MEDIA_ROOT = tmp_path
    board = factories.storyboard(user, panels=PANELS * 5)
    factories.keep(board)
    drawn = services.image_png
    calls = []

    def second_fails(comic, name):
        calls.append(name)
        if len(calls) == 2:
            raise LimitReached(Limit.DRAWING, "spent", retry_after=5)
        return drawn(comic, name)

    monkeypatch.setattr(services, "image_png", second_fails)
    board.page_breaks = [1, 2]
    board.save(update_fields=["page_breaks"])
    refused = publish(person, board)
    assert refused.status_code == 429, refused.content
    assert len(calls) == 2
    assert published_files() == []
    assert not ReadingLink.objects.exists()
