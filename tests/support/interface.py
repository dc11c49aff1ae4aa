"""The interface's catalogs as the tests read them: what an English page says, so a page in
another language can be checked for English left on it.

Used by the page tests (Django's test client) and the browser tests alike.
"""

from __future__ import annotations

import re
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import polib

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "locale"
DOMAINS = ("django", "djangojs")
# %(name)s, %(count)d, %s, {name}: what a message fills in.
PLACEHOLDER = re.compile(r"%\((\w+)\)[sdrfi]|%[sdrfi]|\{\w*\}")
TAG = re.compile(r"<[^>]+>")


def catalog(language: str, domain: str) -> polib.POFile:
    return polib.pofile(str(LOCALE / language / "LC_MESSAGES" / f"{domain}.po"))


def catalogs() -> list[Path]:
    """Every .po file of the interface."""
    return sorted(LOCALE.glob("*/LC_MESSAGES/*.po"))


@cache
def english_phrases(language: str = "ja") -> frozenset[str]:
    """The fixed English runs of the catalog's messages, of two words or more: the text an
    English page shows around what it fills in ("Panel 2 of 3 is queued" gives "is queued").
    A page in `language` showing one of them has English left on it."""
    phrases = set()
    for domain in DOMAINS:
        for entry in catalog(language, domain):
            for message in filter(None, (entry.msgid, entry.msgid_plural)):
                text = TAG.sub(" ", message.replace("&quot;", '"'))
                for run in PLACEHOLDER.split(text):
                    run = " ".join((run or "").split()).strip(" .,:;·—–()“”\"'?!…→←+#")
                    if len(re.findall(r"[A-Za-z]{2,}", run)) >= 2:
                        phrases.add(run)
    return frozenset(phrases)


def english_left(text: str, language: str = "ja") -> list[str]:
    """The catalog's English phrases that `text` (what a page shows) still contains."""
    flat = " ".join(text.split())
    return sorted(p for p in english_phrases(language) if p in flat)


class _Shown(HTMLParser):
    """The text a person reads or hears: text nodes (not scripts, styles, templates) and
    titles, alt texts, placeholders and labels."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "template"):
            self._hidden += 1
        for name, value in attrs:
            if name in ("title", "alt", "placeholder", "aria-label") and value:
                self.parts.append(value)

    def handle_endtag(self, tag):
        if tag in ("script", "style", "template") and self._hidden:
            self._hidden -= 1

    def handle_data(self, data):
        if not self._hidden:
            self.parts.append(data)


def shown_text(html: str) -> str:
    """What a person reads of a server-rendered page (before its scripts run)."""
    parser = _Shown()
    parser.feed(html)
    parser.close()
    return " ".join(parser.parts)
