"""A comic as pages, built once per content and cached on disk.

`comic_of()` reads everything a page depends on (the layout, each panel's
current text and kept take, the title, the direction and format) and hashes
it into a key. Page images and exports are built under that key the first
time they are asked for, and served from disk after; any change to the comic
gives a new key, and building under a new key deletes the folders of older
keys that nobody has used for `UNUSED_AFTER_SECONDS` (every build or serve
touches its folder), so a request still building or serving the comic as it
was a moment ago keeps its files. Writes go to a temporary file renamed into
place, so two requests building at once both end with the same complete file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from mangagen.lettering import Letterable
from mangagen.storyboards.models import KeptArt, PageFormat, Storyboard
from mangagen.storyboards.selectors import current_takes

from .compose import PanelArt, compose_page, compose_strip
from .layout import LayoutPanel, Page, paginate

REVISION = 4  # bump when the drawing changes, so every cached page is drawn again

# An older key's folder goes once it has been unused this long (a PDF of the
# comic as it was before an edit may still be reading its pages).
UNUSED_AFTER_SECONDS = 600

_PAGE_NAME = re.compile(r"page-(\d{1,4})\.png", re.ASCII)


@dataclass
class Comic:
    storyboard: Storyboard
    direction: str
    format: str
    pages: list[Page]
    arts: dict[int, PanelArt]
    kept: list[int]
    key: str

    @property
    def folder(self) -> Path:
        return _root(self.storyboard.pk) / self.key


def comic_of(*, storyboard: Storyboard) -> Comic:
    panels = list(storyboard.panels.all())
    takes = current_takes(storyboard=storyboard)
    direction = storyboard.reading_direction
    pages = paginate(
        [LayoutPanel(p.index, p.shot) for p in panels],
        direction=direction,
        breaks=storyboard.page_breaks,
        templates=storyboard.page_templates,
    )
    arts, facts = {}, []
    for panel in panels:
        take = takes.get(panel.art_hash)
        arts[panel.index] = PanelArt(
            index=panel.index,
            letterable=Letterable.of(
                dialogue=panel.dialogue,
                caption=panel.caption,
                shot=panel.shot,
                characters=panel.characters,
                faces=take.faces if take else None,
                blocking=panel.blocking,
            ),
            load=_loader(take) if take else None,
        )
        facts.append([panel.index, panel.content_hash, take.pk if take else None])
    key = _hash(
        [
            REVISION,
            storyboard.title,
            direction,
            storyboard.page_format,
            facts,
            [[p.panels, p.template] for p in pages],
            _info_facts(storyboard),
        ]
    )
    kept = [p.index for p in panels if p.art_hash in takes]
    return Comic(storyboard, direction, storyboard.page_format, pages, arts, kept, key)


def _info_facts(storyboard: Storyboard) -> list:
    """What an export's ComicInfo.xml says beyond the pages: the cast, the places, and the
    series, the chapter's number and the count of chapters."""
    series = storyboard.series
    return [
        [c.name for c in storyboard.characters.all()],
        list(storyboard.places.values_list("name", flat=True)),
        [series.title, storyboard.chapter, series.chapters.count()] if series else None,
    ]


def page_file(comic: Comic, number: int) -> Path:
    """The PNG of page `number` (1-based) as printed pages."""
    page = comic.pages[number - 1]
    return _built(
        comic,
        f"page-{number:03d}.png",
        lambda path: compose_page(
            page, arts=comic.arts, direction=comic.direction, title=comic.storyboard.title
        ).save(path, "PNG"),
    )


def strip_file(comic: Comic) -> Path:
    """The whole comic as one webtoon strip (PNG)."""
    arts = [comic.arts[i] for page in comic.pages for i in page.panels]
    return _built(
        comic,
        "webtoon.png",
        lambda path: compose_strip(
            arts, direction=comic.direction, title=comic.storyboard.title
        ).save(path, "PNG"),
    )


def built(comic: Comic, name: str, build: Callable[[Path], None]) -> Path:
    """Any file derived from this content (an export), built once."""
    return _built(comic, name, build)


def page_names(comic: Comic) -> list[str]:
    """The image names the pages API lists: one per page, or the strip."""
    if comic.format == PageFormat.WEBTOON:
        return ["webtoon.png"]
    return [f"page-{page.number:03d}.png" for page in comic.pages]


def image_file(comic: Comic, name: str) -> Path | None:
    if name == "webtoon.png":
        return strip_file(comic)
    match = _PAGE_NAME.fullmatch(name)
    if match and 1 <= int(match[1]) <= len(comic.pages):
        return page_file(comic, int(match[1]))
    return None


def _built(comic: Comic, name: str, build: Callable[[Path], None]) -> Path:
    path = comic.folder / name
    comic.folder.mkdir(parents=True, exist_ok=True)
    os.utime(comic.folder)  # in use: see _forget_older
    if path.exists():
        return path
    _forget_older(comic)
    handle, temporary = tempfile.mkstemp(dir=comic.folder, suffix=f".part{path.suffix}")
    os.close(handle)
    try:
        build(Path(temporary))
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return path


def _forget_older(comic: Comic) -> None:
    """Deletes the folders of this comic's other keys that nobody has used for
    UNUSED_AFTER_SECONDS; a recent one may still be read by a request that
    began before the comic changed."""
    unused_since = time.time() - UNUSED_AFTER_SECONDS
    for other in _root(comic.storyboard.pk).iterdir():
        if other.name == comic.key or not other.is_dir():
            continue
        try:
            used = other.stat().st_mtime
        except FileNotFoundError:  # another request forgot it first
            continue
        if used < unused_since:
            shutil.rmtree(other, ignore_errors=True)


def _root(storyboard_id: int) -> Path:
    return Path(settings.MEDIA_ROOT) / "pages" / str(storyboard_id)


def _loader(take: KeptArt) -> Callable[[], bytes]:
    def load() -> bytes:
        with take.image.open("rb") as handle:
            return handle.read()

    return load


def _hash(value) -> str:
    encoded = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(encoded.encode()).hexdigest()[:24]
