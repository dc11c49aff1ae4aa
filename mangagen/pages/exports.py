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
from mangagen.lettering import languages, one_line
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
        title=one_line(comic.title),
        producer="Mangagen",
    )


def _cbz(comic: Comic, target: Path) -> None:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as archive:
        for page in comic.pages:
            archive.write(page_file(comic, page.number), f"{page.number:03d}.png")
        archive.writestr("ComicInfo.xml", comic_info(comic))


def comic_info(comic: Comic) -> str:
    """ComicInfo.xml (the Anansi schema comic readers use): title, page count, language,
    reading order."""
    manga = "YesAndRightToLeft" if comic.direction == ReadingDirection.RTL else "No"
    cover = ' Type="FrontCover"'
    pages = "".join(
        f'<Page Image="{i}"{cover if i == 0 else ""} />' for i in range(len(comic.pages))
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<ComicInfo xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xmlns:xsd="http://www.w3.org/2001/XMLSchema">'
        f"<Title>{escape(one_line(comic.title))}</Title>"
        f"<PageCount>{len(comic.pages)}</PageCount>"
        f"<LanguageISO>{languages.bcp47(comic.language)}</LanguageISO>"
        f"<Manga>{manga}</Manga>"
        "<BlackAndWhite>Yes</BlackAndWhite>"
        f"<Pages>{pages}</Pages>"
        "</ComicInfo>"
    )
