"""The languages a comic can be lettered in, and how each is set.

The list is what the shipped fonts can letter (tests/test_lettering.py
letters every language's own name and letters without a missing glyph): the
Latin and Cyrillic scripts, Chinese, Korean and Japanese. Scripts written
right to left or needing glyphs the shipped fonts lack (Arabic, Hebrew,
Thai, Greek with its accents, Ukrainian's and Serbian's own Cyrillic
letters, …) are left out rather than lettered as empty boxes. Japanese is
set vertically; every other language horizontally. Codes are Django's
(lower case, `zh-hans`, `pt-br`); names come from Django's own table of
languages.
"""

from __future__ import annotations

import re

from django.conf.locale import LANG_INFO
from django.utils.translation import gettext, gettext_noop

CODES = (
    "en", "ja", "zh-hans", "zh-hant", "ko", "fr", "de", "es", "it", "pt", "pt-br", "nl",
    "pl", "cs", "sk", "sv", "da", "nb", "fi", "hu", "ro", "tr", "id", "vi", "ca", "hr",
    "sl", "et", "lv", "lt", "ru", "bg",
)  # fmt: skip
ORIGINAL_DEFAULT = "en"
VERTICAL = frozenset({"ja"})

_KANA = re.compile(r"[\u3040-\u30ff\uff66-\uff9f]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")


def normalise(code: str) -> str | None:
    """`code` as this app writes it (`pt_BR`, `PT-br` → `pt-br`), or None when the
    lettering cannot set that language."""
    code = code.strip().replace("_", "-").lower()
    return code if code in CODES else None


# Names Django's own catalogs translate otherwise ("英語(米国)") or not at all; ours has them.
gettext_noop("English")
gettext_noop("Norwegian Bokmal")


def name(code: str) -> str:
    """The language's English name ("Japanese"), for the chat model and the logs."""
    return LANG_INFO[code]["name"]


def display_name(code: str) -> str:
    """The language's name in the interface's language ("Japanese", or "日本語" in Japanese)."""
    return gettext(name(code))


def local_name(code: str) -> str:
    """The language's name in itself ("日本語")."""
    return LANG_INFO[code]["name_local"]


def choices() -> list[tuple[str, str]]:
    """(code, "Japanese — 日本語") for every language, English first, then by name (both
    in the interface's language)."""

    def label(code: str) -> str:
        if display_name(code).casefold() == local_name(code).casefold():
            return display_name(code)
        return f"{display_name(code)} — {local_name(code)}"

    ordered = sorted(CODES, key=lambda c: (c != ORIGINAL_DEFAULT, display_name(c)))
    return [(code, label(code)) for code in ordered]


def is_vertical(code: str) -> bool:
    """Whether text in this language is set in vertical columns (Japanese)."""
    return code in VERTICAL


def bcp47(code: str) -> str:
    """The code as BCP 47 writes it (ComicInfo's LanguageISO): `pt-BR`, `zh-Hans`."""
    first, *rest = code.split("-")
    parts = [first]
    for part in rest:
        parts.append(part.title() if len(part) == 4 else part.upper() if len(part) == 2 else part)
    return "-".join(parts)


def guess(text: str) -> str:
    """A first guess at the language `text` is written in, for a comic whose writer
    has not said: kana is Japanese, hangul Korean, anything else English."""
    if _KANA.search(text):
        return "ja"
    if _HANGUL.search(text):
        return "ko"
    return ORIGINAL_DEFAULT
