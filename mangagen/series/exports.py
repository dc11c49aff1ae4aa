"""The whole series as one file: a PDF of every chapter's pages in order, or a zip of one
CBZ per chapter (each with its own ComicInfo.xml: Series, Number, Count, LanguageISO),
in the chapters' original language or, with `language`, in their translations.

Each chapter's pages and CBZ are built once per content by mangagen.pages and kept in
the media storage (local or S3); the series file is assembled per request from them into
an unnamed temporary file of this process (never the media storage: it is no one's to
keep) that is gone once sent. Chapters with nothing drawn yet are left out.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO

from django.conf import settings
from django.utils.text import slugify
from django.utils.translation import gettext
from PIL import Image

from mangagen.kernel import quotas
from mangagen.lettering import languages, one_line
from mangagen.pages import exports
from mangagen.pages.builds import Comic, comic_of, page_png
from mangagen.pages.compose import DPI
from mangagen.pages.errors import NothingToExport
from mangagen.storyboards.models import ExportFormat, Storyboard
from mangagen.translations.errors import NoSuchTranslation

from .models import Series
from .selectors import chapters_of

# format -> (content type, file suffix)
FORMATS = {"pdf": ("application/pdf", "pdf"), "cbz": ("application/zip", "zip")}


@dataclass(frozen=True)
class SeriesExport:
    file: IO[bytes]
    content_type: str
    suffix: str
    translated: str | None  # the language when some chapter is lettered in a translation


def export_series(*, series: Series, fmt: str, language: str | None = None) -> SeriesExport:
    """The series' file for `fmt` (pdf or cbz), open at its start, every chapter lettered
    in `language` (None: each in its original). Raises NoSuchTranslation when a drawn
    chapter is neither written in nor translated into `language`, NothingToExport when no
    chapter has a panel drawn, and LimitReached when the owner's drawing budget is spent or
    would be by this export (reckoned up front: EXPORT_DRAWING_SECONDS_PER_PAGE a page)."""
    comics = (_comic(chapter, language) for chapter in chapters_of(series=series))
    drawn = [comic for comic in comics if comic is not None and comic.kept]
    if not drawn:
        raise NothingToExport(
            gettext("Nothing is drawn in this series yet: generate a chapter first.")
        )
    # Unlinked already: nothing is left once it is closed (the response closes it when sent).
    handle = tempfile.TemporaryFile()  # noqa: SIM115
    try:
        # Assembling decodes and encodes every page: drawing work, counted as such, and
        # reckoned before anything is drawn (a page a build, a page put in the file), so
        # an export that would pass the budget is refused up front, not midway. Each
        # page built inside is checked and counted on its own as well.
        reckoned = (
            sum(len(comic.pages) for comic in drawn) * settings.EXPORT_DRAWING_SECONDS_PER_PAGE
        )
        with quotas.drawing(user_id=series.owner_id, estimate=reckoned, whole=True):
            if fmt == "pdf":
                pages = (page_png(c, page.number) for c in drawn for page in c.pages)
                write_pdf(pages, handle, title=one_line(series.title))
            else:
                _cbz_per_chapter(drawn, handle)
    except BaseException:
        handle.close()
        raise
    handle.seek(0)
    content_type, suffix = FORMATS[fmt]
    translated = next((c.language for c in drawn if c.translated), None)
    return SeriesExport(handle, content_type, suffix, translated)


def _comic(chapter: Storyboard, language: str | None) -> Comic | None:
    """The chapter lettered in `language`; None for one not translated into it that has
    nothing drawn (it would be left out anyway)."""
    try:
        return comic_of(storyboard=chapter, language=language)
    except NoSuchTranslation as missing:
        if not comic_of(storyboard=chapter).kept:
            return None
        code = languages.normalise(language or "")
        into = languages.display_name(code) if code else repr(language)
        raise NoSuchTranslation(
            gettext(
                "Chapter %(number)s (%(title)r) has no translation into %(language)s: "
                "translate it, or download the series in its original language."
            )
            % {"number": chapter.chapter, "title": chapter.title, "language": into}
        ) from missing


def write_pdf(pages: Iterable[bytes], target: IO[bytes], *, title: str) -> None:
    """The page images `pages` (PNG bytes), in order, as one PDF at B5 print size, into
    `target` (open for reading and writing). Each page is appended to the file on its own
    (an update of it), so a long series never holds more than one decoded page: saving
    them all in one call, or even a dozen at a time, held several times as much
    (bench/series_pdf.py)."""
    for number, png in enumerate(pages):
        with Image.open(io.BytesIO(png)) as image:
            image.convert("RGB").save(
                target,
                "PDF",
                append=number > 0,
                resolution=DPI,
                title=title,
                producer="Mangagen",
            )


def _cbz_per_chapter(comics: list[Comic], target: IO[bytes]) -> None:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as archive:
        for comic in comics:
            chapter = comic.storyboard.chapter or 0
            slug = slugify(comic.storyboard.title) or f"chapter-{chapter}"
            if comic.translated:
                slug = f"{slug}-{comic.language}"
            made = exports.export(comic=comic, fmt=ExportFormat.CBZ, slug=slug)
            archive.writestr(f"{chapter:03d}-{made.filename}", made.data)
