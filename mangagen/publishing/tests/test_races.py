"""Publishing races, made to happen every time on two real PostgreSQL connections: another
connection publishes, stops sharing or deletes the comic between this publish's snapshot
and its lock of the comic's row."""

from pathlib import Path

import pytest

from mangagen.orchestration import comic_deletion as deletion
from mangagen.publishing import services
from mangagen.publishing.models import ReadingLink
from mangagen.storyboards import services as storyboards
from mangagen.storyboards.models import Storyboard
from tests.support import factories
from tests.support.concurrency import meanwhile

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

COMIC = "mangagen_storyboard"


@pytest.fixture
def media(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = tmp_path
    return tmp_path


def published_files(media: Path) -> list[Path]:
    return [p for p in (media / "published").rglob("*") if p.is_file()]


def drawn(user) -> Storyboard:
    board = factories.storyboard(user)
    factories.keep(board)
    return board


def test_two_publishes_at_once_make_one_link_at_the_later_version(user, media):
    board = drawn(user)
    other = lambda: services.publish_comic(storyboard=Storyboard.objects.get(pk=board.pk))  # noqa: E731
    with meanwhile(other, table=COMIC) as done:
        link, created = services.publish_comic(storyboard=board)
    first, first_created = done[0]
    assert first_created and not created
    assert link.pk == first.pk and link.token == first.token and link.version == 2
    assert ReadingLink.objects.count() == 1
    # The first version's folder went with its commit: only the current one is kept.
    assert {p.relative_to(media).parts[1] for p in published_files(media)} == {
        link.folder.split("/")[1]
    }


def test_a_publish_after_sharing_stopped_meanwhile_makes_a_new_link(user, media):
    board = drawn(user)
    before, _ = services.publish_comic(storyboard=board)
    stop = lambda: services.stop_sharing_comic(storyboard=Storyboard.objects.get(pk=board.pk))  # noqa: E731
    with meanwhile(stop, table=COMIC) as done:
        link, created = services.publish_comic(storyboard=board)
    assert done == [None]
    assert created and link.token != before.token and link.version == 1
    assert ReadingLink.objects.get().pk == link.pk


def test_a_comic_deleted_meanwhile_publishes_nothing_and_leaves_no_file(user, media):
    board = drawn(user)
    gone = lambda: deletion.delete_comic(storyboard=Storyboard.objects.get(pk=board.pk))  # noqa: E731
    with meanwhile(gone, table=COMIC) as done, pytest.raises(Storyboard.DoesNotExist):
        services.publish_comic(storyboard=board)
    assert done == [None]
    assert not ReadingLink.objects.exists()
    assert published_files(media) == []


def test_a_chapter_deleted_while_its_series_is_published_is_left_out(user, media):
    from mangagen.series import services as series_services

    series = series_services.create_series(owner=user, title="Rooftops")
    one, two = (series_services.start_chapter(series=series, story="Aiko waits.") for _ in range(2))
    for chapter in (one, two):
        storyboards.update_storyboard(storyboard=chapter, panels=factories.TWO_PANELS)
        factories.keep(chapter)
    gone = lambda: deletion.delete_comic(storyboard=Storyboard.objects.get(pk=two.pk))  # noqa: E731
    with meanwhile(gone, table=COMIC) as done:
        link, created = services.publish_series(series=series)
    assert done == [None] and created
    assert [c["storyboard"] for c in link.manifest["chapters"]] == [one.pk]
    # Nothing of the deleted chapter is left in the storage: only this snapshot's pages.
    names = {str(p.relative_to(media)) for p in published_files(media)}
    pages = {f["name"] for page in link.manifest["pages"] for f in page["files"].values()}
    assert names == pages
