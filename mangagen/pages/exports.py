"""A comic's exports: a print PDF (B5 pages, margins), a CBZ with ComicInfo.xml, a webtoon PNG.

Each is built once per content (see builds.py) and served from disk after.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from PIL import Image

from mangagen.errors import ApplicationError
from mangagen.lettering import one_line
from mangagen.storyboards.models import ExportFormat, ReadingDirection

from .builds import Comic, built, page_file, strip_file
from .compose import DPI


class NothingToExport(ApplicationError):
    code = "nothing_to_export"
    status = 409


@dataclass(frozen=True)
class Export:
    path: Path
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
        raise NothingToExport("Nothing is drawn yet: generate at least one panel first.")
    if fmt == ExportFormat.WEBTOON:
        path = strip_file(comic)
    elif fmt == ExportFormat.PDF:
        path = built(comic, "comic.pdf", lambda target: _pdf(comic, target))
    else:
        path = built(comic, "comic.cbz", lambda target: _cbz(comic, target))
    return Export(path, CONTENT_TYPES[fmt], f"{slug}.{SUFFIXES[fmt]}")


def _pdf(comic: Comic, target: Path) -> None:
    """One PDF page per comic page, at B5 trim size (the pages are drawn at DPI)."""
    pages = [Image.open(page_file(comic, page.number)).convert("RGB") for page in comic.pages]
    pages[0].save(
        target,
        "PDF",
        save_all=True,
        append_images=pages[1:],
        resolution=DPI,
        title=one_line(comic.storyboard.title),
        producer="Mangagen",
    )


def _cbz(comic: Comic, target: Path) -> None:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as archive:
        for page in comic.pages:
            archive.write(page_file(comic, page.number), f"{page.number:03d}.png")
        archive.writestr("ComicInfo.xml", comic_info(comic))


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
    """ComicInfo.xml (the Anansi schema comic readers use): title, series, number and count
    for a chapter, page count, reading order, cast and places."""
    storyboard = comic.storyboard
    fields: dict[str, str | int] = {
        "Title": one_line(storyboard.title),
        "PageCount": len(comic.pages),
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
