"""Publishing a comic or a series as a reading link, and stopping sharing.

Publishing takes a snapshot: every page of every chapter, in the original
and in each translation, is read (or drawn once, against the owner's drawing
budget) through mangagen.pages and copied into a folder of its own in the
media storage, with its ETag. The public reader only ever reads that folder,
so an edit made later reaches the link only when the owner publishes again;
publishing again writes a new folder, moves the same token to it (a new
version) and lets the old folder go once committed.

The files are written before the row that names them (a transaction cannot
take a file back): a publish that fails deletes what it wrote.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, field

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from mangagen.characters.picture_budget import check_picture_bytes
from mangagen.kernel import storage
from mangagen.lettering import languages
from mangagen.pages import exports
from mangagen.pages.builds import comic_of, image_png, page_names
from mangagen.pages.errors import NothingToExport
from mangagen.series.exports import export_series
from mangagen.series.lock_objects import lock_series
from mangagen.series.models import Series
from mangagen.series.selectors import chapters_of
from mangagen.storyboards.lock_objects import lock_storyboard, lock_storyboards
from mangagen.storyboards.models import ExportFormat, Storyboard

from . import changes
from .models import ReadingLink

ROOT = "published"
# A token's random bytes: 192 bits, past the 128 the contract asks for.
TOKEN_BYTES = 24


@dataclass(frozen=True)
class Options:
    """What the owner chose for the link; None keeps the link's current choice."""

    allow_download: bool | None = None
    indexable: bool | None = None
    pen_name: str | None = None


@dataclass
class _Snapshot:
    folder: str
    saved: list[str]
    manifest: dict = field(default_factory=dict)
    bytes: int = 0


def new_token() -> tuple[str, str]:
    """A fresh token and its digest (what the row is found by)."""
    token = secrets.token_urlsafe(TOKEN_BYTES)
    return token, token_digest(token)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def publish_comic(
    *, storyboard: Storyboard, options: Options | None = None
) -> tuple[ReadingLink, bool]:
    """Publishes the comic as it is now; returns its link and whether it is new.

    Raises NothingToExport while no panel is kept, LimitReached when drawing a page
    not yet built passes the owner's drawing budget, Refused (`sheet_uploads_full`)
    when the snapshot would take the owner's stored pictures past
    PICTURE_BYTES_PER_PERSON, Storyboard.DoesNotExist for a comic deleted meanwhile."""
    options = options or Options()
    folder = _new_folder()
    with storage.deleted_if_raised(folder=folder) as saved:  # a failed publish leaves nothing
        snapshot = _Snapshot(folder=folder, saved=saved)
        download = _current(ReadingLink.objects.filter(storyboard=storyboard), options)
        _take(snapshot, [storyboard], title=None, download=download)
        with transaction.atomic():
            lock_storyboard(pk=storyboard.pk)
            link = ReadingLink.objects.filter(storyboard=storyboard).first()
            _within_picture_budget(snapshot, link, owner_id=storyboard.owner_id)
            return _save(
                link, snapshot, options, owner_id=storyboard.owner_id, storyboard=storyboard
            )


def publish_series(*, series: Series, options: Options | None = None) -> tuple[ReadingLink, bool]:
    """Publishes the series' drawn chapters, in order, as they are now (chapters with
    nothing drawn are left out). Raises as publish_comic, Series.DoesNotExist for a
    series deleted meanwhile."""
    options = options or Options()
    for _ in range(SNAPSHOT_TRIES - 1):
        try:
            return _publish_series_once(series, options)
        except _ChapterGone:
            continue  # a chapter was deleted while its pages were copied: take it again
    return _publish_series_once(series, options)


# A series whose chapters keep being deleted while it is published is taken again this
# many times at most (once is all a deletion costs).
SNAPSHOT_TRIES = 3


class _ChapterGone(Exception):
    """A chapter in the snapshot was deleted before the snapshot was saved."""


def _publish_series_once(series: Series, options: Options) -> tuple[ReadingLink, bool]:
    folder = _new_folder()
    with storage.deleted_if_raised(folder=folder) as saved:  # a failed publish leaves nothing
        snapshot = _Snapshot(folder=folder, saved=saved)
        download = _current(ReadingLink.objects.filter(series=series), options)
        _take(snapshot, chapters_of(series=series), title=series.title, download=download)
        if download:
            _series_download(snapshot, series)
        chapters = {chapter["storyboard"] for chapter in snapshot.manifest["chapters"]}
        with transaction.atomic():
            # The series' row, then its chapters' (the lock order): a chapter being deleted
            # is waited for, and one deleted since its pages were copied is never published
            # (its deletion ended the link it could see, not this one).
            lock_series(pk=series.pk)
            if len(lock_storyboards(pks=chapters)) != len(chapters):
                raise _ChapterGone
            link = ReadingLink.objects.filter(series=series).first()
            _within_picture_budget(snapshot, link, owner_id=series.owner_id)
            return _save(link, snapshot, options, owner_id=series.owner_id, series=series)


def stop_sharing_comic(*, storyboard: Storyboard) -> None:
    """Ends the comic's link at once (a link not shared is nothing to end)."""
    with transaction.atomic():
        lock_storyboard(pk=storyboard.pk)
        _end(ReadingLink.objects.filter(storyboard=storyboard))


def stop_sharing_series(*, series: Series) -> None:
    """Ends the series' link at once."""
    with transaction.atomic():
        lock_series(pk=series.pk)
        _end(ReadingLink.objects.filter(series=series))


def end_links_of(*, storyboard: Storyboard) -> None:
    """Ends, inside the caller's transaction, every link that shows the comic: its own,
    and its series' link when that snapshot holds it (a deleted chapter must not stay
    readable). For deleting a comic, with its row locked."""
    links = [*ReadingLink.objects.filter(storyboard=storyboard)]
    if storyboard.series_id is not None:
        series_link = ReadingLink.objects.filter(series_id=storyboard.series_id).first()
        if series_link is not None and storyboard.pk in _chapter_ids(series_link):
            links.append(series_link)
    _end(ReadingLink.objects.filter(pk__in=[link.pk for link in links]))


def end_series_link(*, series: Series) -> None:
    """Ends the series' link inside the caller's transaction (the series is going)."""
    _end(ReadingLink.objects.filter(series=series))


# --- the snapshot -----------------------------------------------------------------------------


def _new_folder() -> str:
    # A folder per version, named at random: two publishes at once never share one.
    return f"{ROOT}/{secrets.token_hex(16)}"


def _current(links, options: Options) -> bool:
    if options.allow_download is not None:
        return options.allow_download
    link = links.first()
    return bool(link and link.allow_download)


def _take(
    snapshot: _Snapshot, chapters: list[Storyboard], *, title: str | None, download: bool
) -> None:
    """Copies each drawn chapter's pages, in every language it has, into the snapshot."""
    chapter_rows: list[dict] = []
    pages: list[dict] = []
    known: dict[str, str] = {}
    for chapter in chapters:
        original = comic_of(storyboard=chapter)
        if not original.kept:
            continue
        codes = [chapter.language, *(t.language for t in chapter.translations.all())]
        titles: dict[str, str] = {}
        files: dict[str, list[dict]] = {}
        for code in codes:
            comic = (
                original
                if code == chapter.language
                else comic_of(storyboard=chapter, language=code)
            )
            titles[code] = comic.title
            files[code] = [
                _store(snapshot, f"{len(chapter_rows) + 1}/{code}/{name}", image_png(comic, name))
                for name in page_names(comic)
            ]
            known.setdefault(code, languages.display_name(code))
        first = len(pages) + 1
        for number in range(len(files[chapter.language])):
            pages.append(
                {
                    "chapter": len(chapter_rows),
                    "files": {code: each[number] for code, each in files.items()},
                }
            )
        chapter_rows.append(
            {
                "storyboard": chapter.pk,
                "number": chapter.chapter,
                "titles": titles,
                "language": chapter.language,
                "direction": original.direction,
                "format": original.format,
                "first": first,
                "count": len(pages) - first + 1,
            }
        )
        if download and title is None:
            made = exports.export(comic=original, fmt=ExportFormat.CBZ, slug="comic")
            snapshot.manifest["download"] = _store(snapshot, "comic.cbz", made.data) | {
                "content_type": made.content_type,
                "suffix": "cbz",
            }
    if not chapter_rows:
        raise NothingToExport(gettext("Nothing is drawn yet: generate at least one panel first."))
    original = chapter_rows[0]["language"]
    snapshot.manifest.update(
        {
            "series": title is not None,
            "title": title,
            "original": original,
            "languages": [
                {"code": code, "name": name}
                for code, name in sorted(known.items(), key=lambda item: item[0] != original)
            ],
            "chapters": chapter_rows,
            "pages": pages,
        }
    )


def _series_download(snapshot: _Snapshot, series: Series) -> None:
    made = export_series(series=series, fmt="cbz")
    with made.file as handle:
        data = handle.read()
    snapshot.manifest["download"] = _store(snapshot, "series.zip", data) | {
        "content_type": made.content_type,
        "suffix": made.suffix,
    }


def _store(snapshot: _Snapshot, name: str, data: bytes) -> dict:
    """Saves `data` in the snapshot's folder; its name there, its strong ETag and its
    size (PICTURE_BYTES_PER_PERSON counts a link's snapshot: selectors.snapshot_bytes)."""
    path = default_storage.save(f"{snapshot.folder}/{name}", ContentFile(data))
    snapshot.saved.append(path)
    snapshot.bytes += len(data)
    return {"name": path, "etag": f'"{hashlib.sha256(data).hexdigest()[:40]}"', "bytes": len(data)}


def _within_picture_budget(snapshot: _Snapshot, link: ReadingLink | None, *, owner_id: int):
    """Refuses (Refused, `sheet_uploads_full`) a snapshot that would take the owner's
    stored pictures past PICTURE_BYTES_PER_PERSON, the one it replaces let go; the
    caller's files are then deleted."""
    replaced = manifest_bytes(link.manifest) if link is not None else 0
    check_picture_bytes(owner_id=owner_id, adding=snapshot.bytes, freeing=replaced)


# --- the row -----------------------------------------------------------------------------------


def _save(
    link: ReadingLink | None, snapshot: _Snapshot, options: Options, *, owner_id: int, **of
) -> tuple[ReadingLink, bool]:
    created = link is None
    if link is None:
        token, digest = new_token()
        link = ReadingLink(owner_id=owner_id, token=token, digest=digest, version=0, **of)
    else:
        _forget_on_commit(link.folder)
        changes.changed(link.digest)  # no process goes on serving the version before
    link.version += 1
    link.published_at = timezone.now()
    link.folder = snapshot.folder
    link.manifest = snapshot.manifest
    if options.allow_download is not None:
        link.allow_download = options.allow_download
    if options.indexable is not None:
        link.indexable = options.indexable
    if options.pen_name is not None:
        link.pen_name = options.pen_name.strip()
    link.save()
    return link, created


def _end(links) -> None:
    for link in links.order_by("pk"):
        _forget_on_commit(link.folder)
        changes.changed(link.digest)  # every process forgets it (serving.py, the bound)
        link.delete()


def _forget_on_commit(folder: str) -> None:
    if folder:
        transaction.on_commit(lambda: storage.delete_folder(folder), robust=True)


def manifest_bytes(manifest: dict) -> int:
    """The bytes of the files a snapshot's manifest names (0 for a file stored before
    sizes were kept)."""
    files = [f for page in manifest.get("pages", []) for f in page.get("files", {}).values()]
    if manifest.get("download"):
        files.append(manifest["download"])
    return sum(int(f.get("bytes") or 0) for f in files)


def _chapter_ids(link: ReadingLink) -> set[int]:
    return {chapter["storyboard"] for chapter in link.manifest.get("chapters", [])}
