"""Reads of reading links: a link by its token, what its owner is shown, and what the
public reader shows (only the snapshot's manifest: never the live comic)."""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from django.urls import reverse

from mangagen.series.models import Series
from mangagen.storyboards.models import ReadingDirection, Storyboard

from .models import ReadingLink
from .services import manifest_bytes, token_digest

# Tokens are 32 characters (services.TOKEN_BYTES); anything far off is no token.
TOKEN_LENGTHS = range(16, 65)


def link_for_token(token: str) -> ReadingLink | None:
    """The link `token` opens, or None. Found by the token's digest (the lookup's timing
    tells nothing of the token), then compared in constant time."""
    if len(token) not in TOKEN_LENGTHS:
        return None
    link = ReadingLink.objects.filter(digest=token_digest(token)).first()
    if link is None or not hmac.compare_digest(link.token.encode(), token.encode()):
        return None
    return link


def link_of_comic(*, storyboard: Storyboard) -> ReadingLink | None:
    return ReadingLink.objects.filter(storyboard=storyboard).first()


def link_of_series(*, series: Series) -> ReadingLink | None:
    return ReadingLink.objects.filter(series=series).first()


def read_url(link: ReadingLink) -> str:
    return reverse("read", args=[link.token])


def link_json(link: ReadingLink | None) -> dict | None:
    """The link as its owner's API shows it; None when not shared."""
    if link is None:
        return None
    return {
        "url": read_url(link),
        "version": link.version,
        "published_at": link.published_at,
        "allow_download": link.allow_download,
        "indexable": link.indexable,
        "pen_name": link.pen_name,
    }


@dataclass(frozen=True)
class PageFile:
    name: str  # in the media storage
    etag: str


def page_file(link: ReadingLink, *, number: int, language: str | None) -> PageFile | None:
    """Page `number` (1-based, across chapters) in `language`, or in its chapter's
    original when that chapter has no translation into it; None past the last page."""
    pages = link.manifest.get("pages", [])
    if not 1 <= number <= len(pages):
        return None
    page = pages[number - 1]
    chapter = link.manifest["chapters"][page["chapter"]]
    found = page["files"].get(language or "") or page["files"][chapter["language"]]
    return PageFile(found["name"], found["etag"])


def download_file(link: ReadingLink) -> dict | None:
    """The published CBZ (a zip of CBZs for a series), only if its owner allowed it."""
    return link.manifest.get("download") if link.allow_download else None


def reader(link: ReadingLink, *, language: str | None) -> dict:
    """What the public reader shows, in `language` (one the link has; else its original):
    the titles, the languages, each chapter and each page's address."""
    manifest = link.manifest
    codes = [each["code"] for each in manifest["languages"]]
    language = language if language in codes else manifest["original"]
    base = read_url(link)
    chapters = []
    for chapter in manifest["chapters"]:
        titles = chapter["titles"]
        chapters.append(
            {
                "number": chapter["number"],
                "title": titles.get(language) or titles[chapter["language"]],
                # Each language's title (the chapter's original where it has no translation).
                "titles": {code: titles.get(code) or titles[chapter["language"]] for code in codes},
                "direction": chapter["direction"],
                "format": chapter["format"],
                "first": chapter["first"],
                "count": chapter["count"],
            }
        )
    pages = [
        {
            "number": number,
            "chapter": page["chapter"],
            # The version in the address: a browser never shows a page of the last one.
            "urls": {code: f"{base}pages/{number}/?lang={code}&v={link.version}" for code in codes},
        }
        for number, page in enumerate(manifest["pages"], start=1)
    ]
    first = chapters[0]
    title = manifest["title"] or first["title"]
    return {
        "title": title,
        "language": language,
        "languages": manifest["languages"],
        "original": manifest["original"],
        "series": manifest["series"],
        "chapters": chapters,
        "pages": pages,
        "direction": first["direction"],
        "rtl": first["direction"] == ReadingDirection.RTL,
        "version": link.version,
        "pen_name": link.pen_name,
        "download": f"{base}download/" if download_file(link) else None,
        "first_page": pages[0]["urls"][language],
    }


def snapshot_bytes(*, owner_id: int) -> int:
    """The bytes of one person's reading links' snapshots (PICTURE_BYTES_PER_PERSON counts
    them: settings PICTURE_COUNTERS)."""
    manifests = ReadingLink.objects.filter(owner_id=owner_id).values_list("manifest", flat=True)
    return sum(manifest_bytes(manifest) for manifest in manifests)
