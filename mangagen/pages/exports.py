"""A comic's exports: a print PDF (B5 pages, margins), a CBZ with ComicInfo.xml, a webtoon PNG.

Each is built once per content (see builds.py) and read back from storage after.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from xml.sax.saxutils import escape

from django.utils.translation import gettext
from PIL import Image

from mangagen.lettering import languages, one_line
from mangagen.storyboards.models import ExportFormat, ReadingDirection

from .builds import Comic, built, cbz_name, page_png, pages_estimate, strip_png
from .compose import DPI
from .errors import NothingToExport


@dataclass(frozen=True)
class Export:
    data: bytes
    content_type: str
    filename: str


CONTENT_TYPES = {
    ExportFormat.PDF: "application/pdf",
    ExportFormat.CBZ: "application/vnd.comicbook+zip",
    ExportFormat.WEBTOON: "image/png",
}
SUFFIXES = {ExportFormat.PDF: "pdf", ExportFormat.CBZ: "cbz", ExportFormat.WEBTOON: "png"}


def export(*, comic: Comic, fmt: str, slug: str) -> Export:
    """The file for `fmt`; raises NothingToExport when no panel has kept art yet."""
    if not comic.kept:
        raise NothingToExport(gettext("Nothing is drawn yet: generate at least one panel first."))
    if fmt == ExportFormat.WEBTOON:
        data = strip_png(comic)
    elif fmt == ExportFormat.PDF:
        data = built(comic, "comic.pdf", lambda: _pdf(comic), estimate=pages_estimate(comic))
    else:
        data = built(comic, cbz_name(comic), lambda: _cbz(comic), estimate=pages_estimate(comic))
    return Export(data, CONTENT_TYPES[fmt], f"{slug}.{SUFFIXES[fmt]}")


def _pdf(comic: Comic) -> bytes:
    """One PDF page per comic page, at B5 trim size (the pages are drawn at DPI)."""
    pages = [
        Image.open(io.BytesIO(page_png(comic, page.number))).convert("RGB") for page in comic.pages
    ]
    target = io.BytesIO()
    pages[0].save(
        target,
        "PDF",
        save_all=True,
        append_images=pages[1:],
        resolution=DPI,
        title=one_line(comic.title),
        producer="Mangagen",
    )
    return target.getvalue()


def _cbz(comic: Comic) -> bytes:
    target = io.BytesIO()
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as archive:
        for page in comic.pages:
            archive.writestr(f"{page.number:03d}.png", page_png(comic, page.number))
        archive.writestr("ComicInfo.xml", comic_info(comic))
    return target.getvalue()


# ComicInfo.xml's elements in the order its schema (the Anansi project's ComicInfo v2.0)
# requires: they form an xs:sequence, so a reader that validates refuses any other order.
# Every element written goes through comic_info_xml, which puts it in its place.
COMIC_INFO_ORDER = (
    "Title",
    "Series",
    "Number",
    "Count",
    "Volume",
    "AlternateSeries",
    "AlternateNumber",
    "AlternateCount",
    "Summary",
    "Notes",
    "Year",
    "Month",
    "Day",
    "Writer",
    "Penciller",
    "Inker",
    "Colorist",
    "Letterer",
    "CoverArtist",
    "Editor",
    "Publisher",
    "Imprint",
    "Genre",
    "Web",
    "PageCount",
    "LanguageISO",
    "Format",
    "BlackAndWhite",
    "Manga",
    "Characters",
    "Teams",
    "Locations",
    "ScanInformation",
    "StoryArc",
    "SeriesGroup",
    "AgeRating",
    "Pages",
    "CommunityRating",
    "MainCharacterOrTeam",
    "Review",
)


def comic_info(comic: Comic) -> str:
    """ComicInfo.xml (the Anansi schema comic readers use): title (in the language it
    is lettered in), series, number and count for a chapter, page count, language,
    reading order, cast and places."""
    storyboard = comic.storyboard
    fields: dict[str, str | int] = {
        "Title": one_line(comic.title),
        "PageCount": len(comic.pages),
        "LanguageISO": languages.bcp47(comic.language),
        "BlackAndWhite": "Yes",
        "Manga": "YesAndRightToLeft" if comic.direction == ReadingDirection.RTL else "No",
    }
    if storyboard.series_id is not None:
        fields["Series"] = one_line(storyboard.series.title)
        fields["Number"] = str(storyboard.chapter)
        fields["Count"] = storyboard.series.chapters.count()
    names = ", ".join(one_line(c.name) for c in storyboard.characters.all())
    places = ", ".join(one_line(p.name) for p in storyboard.places.all())
    if names:
        fields["Characters"] = names
    if places:
        fields["Locations"] = places
    return comic_info_xml(fields, pages=len(comic.pages))


def comic_info_xml(fields: dict[str, str | int], *, pages: int) -> str:
    """The document, each of `fields` (element -> text) in the schema's order, then one
    `<Page>` per page (the first the front cover). Raises ValueError for an element the
    schema does not have."""
    unknown = set(fields) - set(COMIC_INFO_ORDER)
    if unknown:
        raise ValueError(f"ComicInfo has no element {sorted(unknown)[0]!r}")
    cover = ' Type="FrontCover"'
    listed = "".join(f'<Page Image="{i}"{cover if i == 0 else ""} />' for i in range(pages))
    body = "".join(
        f"<Pages>{listed}</Pages>"
        if name == "Pages"
        else f"<{name}>{escape(str(fields[name]))}</{name}>"
        for name in COMIC_INFO_ORDER
        if name in fields or (name == "Pages" and pages)
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<ComicInfo xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xmlns:xsd="http://www.w3.org/2001/XMLSchema">'
        f"{body}"
        "</ComicInfo>"
    )
