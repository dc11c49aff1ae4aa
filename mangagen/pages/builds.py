"""A comic as pages, built once per content and kept in storage.

`comic_of()` reads everything a page depends on (the layout, each panel's
current text in the language asked for and kept take, the title, the
direction and format, and what an export's ComicInfo.xml says: the cast,
the places, the series and the chapter's place in it) and hashes it into a
key. Page images and exports are built under that key
(`pages/<storyboard>/<key>/<name>` in the media storage, local or S3) the
first time they are asked for, and read back after; any change to the
comic, or another language, gives a new key. Rough pages (`rough=True`: Review's
*name*) compose each panel with no kept take from its rough, and key each page
by its own content, so a rough arriving draws its own page again and no other.
A comic keeps the files of its
PAGE_BUILDS_KEPT most recently built keys (`PageBuild` rows): building under
a new key lets the older ones go. A request still reading the comic as it
was a moment ago loses nothing: a file it finds gone is drawn again from the
content it holds. Saving replaces a file whole, so two requests building at
once both end with the same complete file.

Drawing costs CPU on the request's thread: each build is one of the owner's
DRAWING_BUILDS_IN_FLIGHT, and reserves what it is reckoned to cost (from what it
will letter: `page_estimate`, `strip_estimate`) from their drawing budget before it
starts (`quotas.drawing`); reading a built file is free.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import IntegrityError
from django.utils import timezone
from PIL import Image

from mangagen.kernel import quotas, storage
from mangagen.lettering import Letterable, cost
from mangagen.roughs.models import Rough, RoughState
from mangagen.roughs.selectors import current_roughs
from mangagen.storyboards.models import KeptArt, PageFormat, Storyboard
from mangagen.storyboards.selectors import current_takes
from mangagen.translations import selectors as translations

from .compose import (
    DPI,
    MAX_FRAME_ASPECT,
    PANEL_ASPECT,
    STRIP_HEAD,
    STRIP_SPACING,
    STRIP_WIDTH,
    PanelArt,
    compose_page,
    compose_strip,
    page_size,
)
from .layout import LayoutPanel, Page, paginate
from .models import PageBuild

REVISION = 7  # bump when the drawing changes, so every cached page is drawn again

# Rough pages are read on a screen, a page a few hundred pixels wide: drawn at this
# resolution (a sharp picture on a dense screen), a quarter of a printed page's pixels.
ROUGH_DPI = 75

# Content keys of one comic whose files are kept: the one shown, and the last few
# before it (a tab not yet reloaded, an export begun before an edit).
PAGE_BUILDS_KEPT = 3

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
    language: str  # what it is lettered in: the original's, or a translation's
    title: str  # in that language
    translated: bool = False
    # Rough pages: the panels composed from their roughs, and each page's own key.
    rough: bool = False
    from_roughs: list[int] = dataclasses.field(default_factory=list)
    page_keys: dict[int, str] = dataclasses.field(default_factory=dict)

    @property
    def folder(self) -> str:
        """Where this content's files are, in the media storage."""
        return f"{_root(self.storyboard.pk)}/{self.key}"

    @property
    def drawn(self) -> bool:
        """Whether it has pages to show: a panel kept, or (rough pages) any panel at all,
        drawn or not yet (its place then shows where its rough will be)."""
        return bool(self.kept) or (self.rough and bool(self.pages))

    def key_of(self, name: str) -> str:
        """The key the page image `name` is built and served under: a rough page's own,
        else the comic's."""
        match = _PAGE_NAME.fullmatch(name)
        if self.rough and match and int(match[1]) in self.page_keys:
            return self.page_keys[int(match[1])]
        return self.key


def comic_of(*, storyboard: Storyboard, language: str | None = None, rough: bool = False) -> Comic:
    """The comic as pages, lettered in `language` (None: the original's); raises
    NoSuchTranslation for a language it has no translation into. `rough`: each panel
    with no kept take is composed from its ready rough (Review's rough pages)."""
    panels = list(storyboard.panels.all())
    lettering = translations.lettering(storyboard=storyboard, language=language)
    takes = current_takes(storyboard=storyboard)
    roughs: dict[str, Rough] = {}
    if rough:
        roughs = {
            art_hash: found
            for art_hash, found in current_roughs(
                storyboard_id=storyboard.pk,
                art_hashes=[p.art_hash for p in panels if p.art_hash not in takes],
            ).items()
            if found.state == RoughState.READY and found.image
        }
    direction = storyboard.reading_direction
    pages = paginate(
        [LayoutPanel(p.index, p.shot) for p in panels],
        direction=direction,
        breaks=storyboard.page_breaks,
        templates=storyboard.page_templates,
    )
    arts, facts = {}, {}
    for panel in panels:
        take = takes.get(panel.art_hash)
        sketch = roughs.get(panel.art_hash)
        text = lettering.of(panel.index)
        arts[panel.index] = PanelArt(
            index=panel.index,
            letterable=Letterable.of(
                dialogue=text.dialogue,
                caption=text.caption,
                shot=panel.shot,
                characters=panel.characters,
                faces=take.faces if take else (sketch.faces if sketch else None),
                blocking=panel.blocking,
                language=lettering.language,
                sfx=text.sfx,
            ),
            load=_loader(take) if take else (_loader(sketch) if sketch else None),
        )
        facts[panel.index] = [
            panel.index,
            panel.content_hash,
            take.pk if take else None,
            text.dialogue,
            text.caption,
            text.sfx,
            *([f"rough:{sketch.pk}"] if sketch else []),
        ]
    head = [REVISION, lettering.language, lettering.title, direction, storyboard.page_format]
    key = _hash([*head, list(facts.values()), [[p.panels, p.template] for p in pages]])
    kept = [p.index for p in panels if p.art_hash in takes]
    page_keys = {}
    if rough:  # each page keyed by what is on it: a rough arriving draws its page alone
        for page in pages:
            on_page = [facts[i] for i in page.panels]
            title = lettering.title if page.number == 1 else ""
            page_keys[page.number] = _hash(
                ["rough", *head, title, page.number, on_page, page.panels, page.template]
            )
    return Comic(
        storyboard,
        direction,
        storyboard.page_format,
        pages,
        arts,
        kept,
        key,
        language=lettering.language,
        title=lettering.title,
        translated=lettering.translated,
        rough=rough,
        from_roughs=[p.index for p in panels if p.art_hash in roughs],
        page_keys=page_keys,
    )


def cbz_name(comic: Comic) -> str:
    """The CBZ's name in the comic's folder. Its ComicInfo.xml says more than the pages
    (the cast, the places, the series, the chapter's number and the count of chapters):
    those name a folder of its own, not the key every page image is named by, so a new
    chapter or a renamed character draws no page again."""
    storyboard = comic.storyboard
    series = storyboard.series
    facts = [
        [c.name for c in storyboard.characters.all()],
        list(storyboard.places.values_list("name", flat=True)),
        [series.title, storyboard.chapter, series.chapters.count()] if series else None,
    ]
    return f"info-{_hash(facts)}/comic.cbz"


def page_png(comic: Comic, number: int) -> bytes:
    """The PNG of page `number` (1-based) as printed pages; a rough page at ROUGH_DPI."""
    page = comic.pages[number - 1]
    dpi = ROUGH_DPI if comic.rough else DPI
    return built(
        comic,
        f"page-{number:03d}.png",
        lambda: _png(
            compose_page(
                page, arts=comic.arts, direction=comic.direction, title=comic.title, dpi=dpi
            )
        ),
        estimate=page_estimate(comic, page),
    )


def strip_png(comic: Comic) -> bytes:
    """The whole comic as one webtoon strip (PNG)."""
    return built(
        comic,
        "webtoon.png",
        lambda: _png(
            compose_strip(_strip_arts(comic), direction=comic.direction, title=comic.title)
        ),
        estimate=strip_estimate(comic),
    )


def _strip_arts(comic: Comic) -> list[PanelArt]:
    return [comic.arts[i] for page in comic.pages for i in page.panels]


# --- what a build is reckoned to cost (the drawing budget's reservation) ---------------


def page_estimate(comic: Comic, page: Page) -> float:
    """CPU seconds page `page` is reckoned to take to draw and encode (lettering.cost)."""
    width, height = page_size()
    seconds = cost.encoding_seconds((width, height))
    for index, (x0, y0, x1, y1) in page.rects.items():
        frame = (round((x1 - x0) * width), round((y1 - y0) * height))
        seconds += cost.panel_seconds(comic.arts[index].letterable, frame)
    return seconds


def strip_estimate(comic: Comic) -> float:
    """CPU seconds the webtoon strip is reckoned to take: each frame at the strip's width,
    as tall as a kept picture may make it (its real shape would need its file read)."""
    seconds, height = 0.0, STRIP_HEAD
    for art in _strip_arts(comic):
        aspect = PANEL_ASPECT if art.load is None else MAX_FRAME_ASPECT
        frame = (STRIP_WIDTH, round(STRIP_WIDTH * aspect))
        height += frame[1] + STRIP_SPACING
        seconds += cost.panel_seconds(art.letterable, frame)
    return seconds + cost.encoding_seconds((STRIP_WIDTH + 80, height))


def pages_estimate(comic: Comic) -> float:
    """Every page of the comic built, then each decoded and put in a file again."""
    per_page = 2 * cost.encoding_seconds(page_size())
    return sum(page_estimate(comic, page) + per_page for page in comic.pages)


def page_names(comic: Comic) -> list[str]:
    """The image names the pages API lists: one per page, or the strip."""
    if comic.format == PageFormat.WEBTOON:
        return ["webtoon.png"]
    return [f"page-{page.number:03d}.png" for page in comic.pages]


def image_png(comic: Comic, name: str) -> bytes | None:
    """The page image called `name` (from page_names), or None for a name it has not."""
    if name == "webtoon.png":
        return strip_png(comic)
    match = _PAGE_NAME.fullmatch(name)
    if match and 1 <= int(match[1]) <= len(comic.pages):
        return page_png(comic, int(match[1]))
    return None


def built(comic: Comic, name: str, build: Callable[[], bytes], *, estimate: float) -> bytes:
    """The file `name` derived from this content: read from storage if it was built,
    else built now and stored: one of the owner's builds in flight, its `estimate`
    (CPU seconds) reserved from their drawing budget before it starts and settled with
    what it took (quotas.drawing)."""
    path = f"{_root(comic.storyboard.pk)}/{comic.key_of(name)}/{name}"
    stored = storage.read(path)
    if stored is not None:
        return stored
    with quotas.drawing(user_id=comic.storyboard.owner_id, estimate=estimate):
        data = build()
    default_storage.save(path, ContentFile(data))
    _record(comic, comic.key_of(name))  # after the file: a key with files ends with its row
    return data


def _record(comic: Comic, key: str) -> None:
    """Marks the key `key` of the comic as just built and lets go of the files of its
    keys beyond the PAGE_BUILDS_KEPT most recently built (a rough comic's pages each have
    their own: its pages and a few before)."""
    storyboard_id = comic.storyboard.pk
    kept = PAGE_BUILDS_KEPT + len(comic.page_keys)
    try:
        PageBuild.objects.update_or_create(
            storyboard_id=storyboard_id, key=key, defaults={"built_at": timezone.now()}
        )
    except IntegrityError:  # the comic was deleted meanwhile; its folder goes with it
        return
    older = PageBuild.objects.filter(storyboard_id=storyboard_id)[kept:]
    for old in list(older):
        # The row first: a build of that key racing with this writes its file, then
        # its row again, so no file is ever left without a row to let it go.
        PageBuild.objects.filter(pk=old.pk).delete()
        storage.delete_folder(f"{_root(storyboard_id)}/{old.key}")


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def _root(storyboard_id: int) -> str:
    return f"pages/{storyboard_id}"


def _loader(take: KeptArt) -> Callable[[], bytes]:
    def load() -> bytes:
        with take.image.open("rb") as handle:
            return handle.read()

    return load


def _hash(value) -> str:
    encoded = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(encoded.encode()).hexdigest()[:24]
