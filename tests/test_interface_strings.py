"""Every string a person reads is marked for translation, in the templates and the scripts.

A template's text is checked with Django's own template lexer: text outside
`{% translate %}` and `{% blocktranslate %}` that a person would read (an HTML
text node, or a title, alt, placeholder, aria-label or button value) may hold
no word, only the product's name, symbols and numbers; a filter may not add
English either (`default:"a render"`, `pluralize:"es"`). A script's string
literal is checked the practical way: one with a space or a capitalised
English word must go through gettext/ngettext/pgettext (static/js/i18n.js),
unless it is an HTTP header, a key name, or a list of the stylesheet's classes.

Pure: no database, no network.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.template.base import Lexer, TokenType

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = sorted((ROOT / "templates").rglob("*.html"))
SCRIPTS = sorted((ROOT / "static" / "js").glob("*.js"))

# Words no language translates.
UNTRANSLATED = {"Mangagen"}
WORD = re.compile(r"[A-Za-z]{2,}")
TRANSLATED = "\x02"  # stands for what a translate tag or block puts in the page
VARIABLE = "\x01"  # stands for a variable's value
# Attributes whose value a person reads (or hears).
READ_ATTRIBUTES = {"title", "alt", "placeholder", "aria-label", "label"}
# Filters whose string argument is a format, not words: date:"SHORT_DATETIME_FORMAT".
FORMAT_FILTERS = {"date", "time", "json_script", "add"}


def _words(text: str) -> list[str]:
    return [w for w in WORD.findall(text) if w not in UNTRANSLATED]


class _ReadText(HTMLParser):
    """Collects the text a person reads from an HTML skeleton."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.read: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        values = dict(attrs)
        for name, value in attrs:
            shown = name in READ_ATTRIBUTES or (
                name == "value" and tag == "input" and values.get("type") in ("submit", "button")
            )
            if shown and value:
                self.read.append(value)

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.read.append(data)


def untranslated_in_template(source: str) -> list[str]:
    """The words of `source` a person would read that no translate tag covers."""
    skeleton: list[str] = []
    found: list[str] = []
    inside: str | None = None  # the block whose text is not the page's: blocktranslate, comment, …
    for token in Lexer(source).tokenize():
        content = token.contents.strip()
        if token.token_type == TokenType.BLOCK:
            name = content.split()[0] if content else ""
            if inside:
                if name == f"end{inside}":
                    inside = None
                continue
            if name in ("blocktranslate", "blocktrans"):
                inside = name
                skeleton.append(TRANSLATED)
            elif name in ("comment", "verbatim"):
                inside = name
            elif name in ("translate", "trans"):
                skeleton.append("" if " as " in f" {content} " else TRANSLATED)
            continue
        if inside or token.token_type == TokenType.COMMENT:
            continue
        if token.token_type == TokenType.VAR:
            for filter_name, literal in re.findall(r"\|(\w+):[\"']([^\"']*)[\"']", content):
                if filter_name not in FORMAT_FILTERS and _words(literal):
                    found.append(f"{{{{ {content} }}}}")
            skeleton.append(VARIABLE)
        else:
            skeleton.append(token.contents)
    parser = _ReadText()
    parser.feed("".join(skeleton))
    parser.close()
    for text in parser.read:
        if _words(text):
            found.append(" ".join(text.split()).replace(TRANSLATED, "…").replace(VARIABLE, "…"))
    return found


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_template_string_is_marked_for_translation(template):
    assert untranslated_in_template(template.read_text()) == []


def test_the_template_check_finds_what_is_not_marked():
    page = """{% load i18n %}<h1>Your comics</h1><p>{% translate "Credits" %}</p>
    <img alt="A panel"><input type="submit" value="Go on">
    <button title="{% translate 'Move' %}">↑</button>
    {% blocktranslate %}Hello {{ name }}{% endblocktranslate %}{{ n }} panel{{ n|pluralize:"es" }}
    <span>{{ hold.reference|default:"a render" }}</span>{% comment %}Not shown{% endcomment %}
    <title>Mangagen</title><script>const x = "Not checked here";</script>"""
    assert untranslated_in_template(page) == [
        '{{ n|pluralize:"es" }}',
        '{{ hold.reference|default:"a render" }}',
        "Your comics",
        "A panel",
        "Go on",
        "…… panel…",
    ]


# --- scripts ---------------------------------------------------------------------------

GETTEXT_CALLS = {
    "gettext": 1,
    "ngettext": 2,
    "pgettext": 2,
}  # how many leading arguments are messages
# Strings that are not words for a person: HTTP headers and key names.
NOT_WORDS = {
    "Accept",
    "Content-Type",
    "X-CSRFToken",
    "ArrowLeft",
    "ArrowRight",
    "Delete",
    "Backspace",
}
CSS_CLASS = re.compile(r"\.([A-Za-z][\w-]*)")


def stylesheet_classes() -> set[str]:
    classes = set()
    for sheet in sorted((ROOT / "static" / "css").glob("*.css")):  # app.css, lettering.css
        classes.update(CSS_CLASS.findall(sheet.read_text()))
    for template in TEMPLATES:
        for value in re.findall(r'class="([^"{]*)"', template.read_text()):
            classes.update(value.split())
    return classes


def literals(source: str):
    """(literal's text, whether a gettext call takes it as a message) for every string and
    template literal of a script; comments and regular expressions are skipped."""
    i, n = 0, len(source)
    calls: list[list] = []  # open brackets: [kind, argument index, messages taken]
    pending_call: str | None = None
    last = ""  # the last significant character, to tell a division from a regex
    while i < n:
        c = source[i]
        if source.startswith("//", i):
            i = source.find("\n", i)
            i = n if i < 0 else i
            continue
        if source.startswith("/*", i):
            i = source.index("*/", i) + 2
            continue
        if c in "\"'`":
            j, text = i + 1, []
            while source[j] != c:
                if source[j] == "\\":
                    text.append(source[j : j + 2])
                    j += 2
                    continue
                if c == "`" and source.startswith("${", j):
                    depth, j = 1, j + 2
                    while depth:
                        depth += {"{": 1, "}": -1}.get(source[j], 0)
                        j += 1
                    text.append(" ")
                    continue
                text.append(source[j])
                j += 1
            call = calls[-1] if calls else None
            message = bool(call and call[0] and call[1] < GETTEXT_CALLS[call[0]] and c != "`")
            yield "".join(text), message
            i, last = j + 1, "a"
            continue
        if c == "/" and last in "(,=:[!&|?{};+-*%<>~^" + "\n":
            j = i + 1
            in_class = False
            while source[j] != "/" or in_class:
                if source[j] == "\\":
                    j += 1
                elif source[j] == "[":
                    in_class = True
                elif source[j] == "]":
                    in_class = False
                j += 1
            i, last = j + 1, "a"
            continue
        if c.isalpha() or c == "_":
            j = i
            while j < n and (source[j].isalnum() or source[j] in "_$"):
                j += 1
            word = source[i:j]
            pending_call = word if word in GETTEXT_CALLS and source[i - 1] != "." else None
            last = "a" if word not in ("return", "typeof", "case") else "("
            i = j
            continue
        if c in "([{":
            calls.append([pending_call if c == "(" else None, 0])
        elif c in ")]}" and calls:
            calls.pop()
        elif c == "," and calls:
            calls[-1][1] += 1
        if not c.isspace():
            last = c
            if c != "(":
                pending_call = None
        i += 1


def shown_untranslated(source: str, classes: set[str]) -> list[str]:
    """A script's string literals that read as English and no gettext call takes."""
    found = []
    for text, message in literals(source):
        if message or text in NOT_WORDS:
            continue
        words = text.split()
        if words and all(w in classes for w in words):
            continue  # a className
        if text.lstrip().startswith(("/", "#", ".", "[", "http")):
            continue  # an address or a selector
        english = re.search(r"[A-Za-z]{2,}\s+[A-Za-z]{2,}", text) or re.search(
            r"\b[A-Z][a-z]+", text
        )
        if english:
            found.append(text)
    return found


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_script_string_shown_to_a_person_goes_through_gettext(script):
    assert shown_untranslated(script.read_text(), stylesheet_classes()) == []


def test_the_script_check_finds_what_is_not_marked():
    source = """
    import { gettext, ngettext } from "./i18n.js"; // Not a string
    node.textContent = "Saving…"; label.title = `Panel ${i} of ${n}`;
    box.className = "row between"; fetch("/api/me/", { headers: { Accept: "application/json" } });
    const a = gettext("Panel %(index)s", { index, note: "Left behind" });
    const b = ngettext("%(count)s panel", "%(count)s panels", n);
    const re = /(?:^|;\\s*)csrftoken=([^;]+)/; const half = total / 2; /* Ignored too */
    """
    assert shown_untranslated(source, {"row", "between"}) == [
        "Saving…",
        "Panel   of  ",
        "Left behind",
    ]
