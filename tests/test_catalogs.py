"""The interface's catalogs (locale/<language>/LC_MESSAGES): complete, consistent, compiled.

- every message has a translation, none empty, none fuzzy;
- a translation fills in exactly what its message does (`%(name)s`, `{name}`);
- the committed .mo files say what the .po files say (nothing is compiled at run time);
- every message the code marks is in the catalogs (makemessages on a copy of the tree,
  when GNU gettext's xgettext is installed, as CI installs it).

No database, no network.
"""

from __future__ import annotations

import gettext
import shutil
from collections import Counter

import pytest
from django.core.management import call_command

from tests.support.interface import DOMAINS, PLACEHOLDER, ROOT, catalog, catalogs

PO_FILES = catalogs()
# What makemessages reads: the code, the templates and the scripts (never the tests).
SOURCES = ("mangagen", "ledger", "speculation", "templates", "static")


def _id(path) -> str:
    return str(path.relative_to(ROOT))


def _placeholders(text: str) -> Counter:
    return Counter(m.group(1) or m.group(0) for m in PLACEHOLDER.finditer(text))


def test_there_is_a_japanese_catalog_for_the_code_and_for_the_scripts():
    assert {_id(p) for p in PO_FILES} >= {
        "locale/ja/LC_MESSAGES/django.po",
        "locale/ja/LC_MESSAGES/djangojs.po",
    }


@pytest.mark.parametrize("po_file", PO_FILES, ids=_id)
def test_every_message_is_translated(po_file):
    po = catalog(po_file.parts[-3], po_file.stem)
    assert len(po) > 0
    assert [e.msgid for e in po.untranslated_entries()] == []
    assert [e.msgid for e in po.fuzzy_entries()] == []
    assert [
        e.msgid for e in po if not e.obsolete and not (e.msgstr or all(e.msgstr_plural.values()))
    ] == []


@pytest.mark.parametrize("po_file", PO_FILES, ids=_id)
def test_every_translation_fills_in_what_its_message_does(po_file):
    wrong = []
    for entry in catalog(po_file.parts[-3], po_file.stem):
        wanted = _placeholders(entry.msgid)
        translations = list(entry.msgstr_plural.values()) if entry.msgid_plural else [entry.msgstr]
        if entry.msgid_plural:
            # A plural form may leave the count out ("全 %(count)s コマ" needs it; "1 件" may not).
            wanted = wanted | _placeholders(entry.msgid_plural)
        for text in translations:
            if set(_placeholders(text)) != set(wanted):
                wrong.append((entry.msgid, text))
        if entry.msgstr.count("%%") != entry.msgid.count("%%"):
            wrong.append((entry.msgid, entry.msgstr))
    assert wrong == []


@pytest.mark.parametrize("po_file", PO_FILES, ids=_id)
def test_the_committed_mo_file_says_what_the_po_file_says(po_file):
    mo_file = po_file.with_suffix(".mo")
    assert mo_file.exists(), f"{_id(mo_file)} is missing: run manage.py compilemessages"
    with mo_file.open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)._catalog  # type: ignore[attr-defined]
    expected = {}
    for entry in catalog(po_file.parts[-3], po_file.stem):
        key = f"{entry.msgctxt}\x04{entry.msgid}" if entry.msgctxt else entry.msgid
        if entry.msgid_plural:
            for form, text in entry.msgstr_plural.items():
                expected[(key, int(form))] = text
        else:
            expected[key] = entry.msgstr
    compiled.pop("", None)  # the header
    assert compiled == expected, f"{_id(mo_file)} is stale: run manage.py compilemessages"


@pytest.mark.skipif(not shutil.which("xgettext"), reason="GNU gettext is not installed")
@pytest.mark.parametrize("domain", DOMAINS)
def test_every_message_the_code_marks_is_in_the_catalogs(domain, tmp_path, settings, monkeypatch):
    for source in SOURCES:
        (tmp_path / source).symlink_to(ROOT / source)
    settings.LOCALE_PATHS = [tmp_path / "locale"]
    monkeypatch.chdir(tmp_path)
    call_command(
        "makemessages",
        locale=["ja"],
        domain=domain,
        symlinks=True,
        no_location=True,
        ignore_patterns=["*/tests/*"],
        verbosity=0,
    )
    extracted = catalog_at(tmp_path / "locale" / "ja" / "LC_MESSAGES" / f"{domain}.po")
    committed = {(e.msgctxt, e.msgid) for e in catalog("ja", domain)}
    assert sorted(extracted - committed, key=str) == [], "run makemessages and translate these"
    assert sorted(committed - extracted, key=str) == [], "no longer in the code: remove these"


def catalog_at(path) -> set[tuple[str | None, str]]:
    import polib

    return {(e.msgctxt, e.msgid) for e in polib.pofile(str(path))}
