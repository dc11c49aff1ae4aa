"""Every page's modules run after the scripts' catalog (djangojs), which base.html loads
at the end of the body, just before `{% block scripts %}`: a module loaded earlier (in
the content block) imports i18n.js before the catalog is there, and the whole page's
scripts then speak English in every language. No database, no network."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULE = re.compile(r'<script[^>]*type="module"')
SCRIPTS_BLOCK = re.compile(r"{% block scripts %}.*?{% endblock %}", re.S)


def test_every_module_script_is_in_the_scripts_block():
    early = []
    for template in sorted((ROOT / "templates").rglob("*.html")):
        text = template.read_text()
        outside = SCRIPTS_BLOCK.sub("", text)
        if template.name != "base.html" and MODULE.search(outside):
            early.append(str(template.relative_to(ROOT)))
    assert early == []


def test_the_catalog_comes_before_the_scripts_block_in_base():
    base = (ROOT / "templates" / "base.html").read_text()
    assert base.index("javascript-catalog") < base.index("{% block scripts %}")
