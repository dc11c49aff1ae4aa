"""The docs and the settings files say what the code does.

- docs/api.md documents every URL route, job event type, speculation decline
  reason, websocket close code, job, panel and sheet state, refused-upload code,
  per-person limit code, translation refusal and language the lettering can set
  (the enums in the code are the source of truth);
- no file of the repository links outside it, and every relative link of the
  README and docs/ resolves, to a file and, where it names one, to a heading there;
- `.env.example` lists exactly the environment variables that
  `mangagen/settings/` and the `Procfile` read, and docs/settings.md's table
  names each of them with the default the code has (as does the README's short
  table of the settings that matter most, for the ones it names);
- the README stays a front door: at most 300 lines.

Pure: no database, no network.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from mangagen.characters.models import SheetState, UploadProblem
from mangagen.jobs.events import EventType
from mangagen.jobs.models import JobState, PanelState
from mangagen.kernel.quotas import Limit
from mangagen.lettering import languages
from mangagen.routing import websocket_urlpatterns
from mangagen.translations.errors import Refusal
from mangagen.web.consumers import CloseCode
from speculation.models import DeclineReason

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
README = ROOT / "README.md"
SETTINGS_DOC = ROOT / "docs" / "settings.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
ENV_EXAMPLE = ROOT / ".env.example"
SETTINGS = ROOT / "mangagen" / "settings"
PROCFILE = ROOT / "Procfile"

# Folders that are not the project's own text.
NOT_OURS = {".venv", ".git", "node_modules", "var", "media", "artifacts", "staticfiles"}


def section(text: str, heading: str) -> str:
    """The Markdown section under `heading` (a whole heading line), up to the next
    heading of the same or a higher level."""
    match = re.search(rf"^(#+) {re.escape(heading)}\s*$", text, flags=re.MULTILINE)
    assert match, f"no heading {heading!r}"
    level = len(match.group(1))
    rest = text[match.end() :]
    end = re.search(rf"^#{{1,{level}}} ", rest, flags=re.MULTILINE)
    return rest[: end.start()] if end else rest


def undocumented(values, text: str) -> list[str]:
    return sorted(str(v) for v in values if f"`{v}`" not in text)


# --- docs/api.md against the code's enums ------------------------------------------------------


def test_every_job_event_type_is_documented_with_its_payload():
    events = section(API.read_text(), "Events")
    rows = {m.group(1) for m in re.finditer(r"^\| `([a-z_.]+)` \|", events, flags=re.MULTILINE)}
    assert undocumented(EventType, "".join(f"`{r}`" for r in rows)) == []
    assert sorted(rows - {e.value for e in EventType}) == [], "documented but never emitted"


def test_every_decline_reason_is_documented():
    reasons = section(API.read_text(), "Decline reasons")
    assert undocumented(DeclineReason.values, reasons) == []


def test_every_websocket_close_code_is_documented():
    codes = section(API.read_text(), "Close codes")
    assert undocumented([int(c) for c in CloseCode], codes) == []


def test_every_job_and_panel_state_is_documented():
    jobs = section(API.read_text(), "Jobs")
    assert undocumented(JobState.values, jobs) == []
    assert undocumented(PanelState.values, jobs) == []


def test_every_sheet_state_and_upload_refusal_is_documented():
    sheets = section(API.read_text(), "Character sheets")
    assert undocumented(SheetState.values, sheets) == []
    assert undocumented(UploadProblem.values, sheets) == []


def test_every_per_person_limit_code_is_documented():
    errors = section(API.read_text(), "Errors")
    assert undocumented([limit.value for limit in Limit], errors) == []


def test_every_translation_refusal_and_language_is_documented():
    assert undocumented([r.value for r in Refusal], section(API.read_text(), "Errors")) == []
    assert undocumented(languages.CODES, section(API.read_text(), "Translations")) == []


def test_the_render_kinds_table_says_each_kind_and_its_price():
    """docs/architecture.md's table of render kinds follows the declarations: a kind's
    price changed in its class fails here until the table says it too."""
    from mangagen.render_kinds.kind import registered

    table = section(ARCHITECTURE.read_text(), "Render kinds")
    documented = {
        row[0].strip("` "): int(row[2])
        for row in (line.strip("|").split("|") for line in table.splitlines())
        if len(row) > 2 and row[2].strip().isdigit()
    }
    declared = {
        name: kind.credits
        for name, kind in registered().items()
        if ".tests." not in type(kind).__module__  # a kind a test declares for itself
    }
    assert documented == declared


def _routes(patterns, prefix: str = "") -> list[str]:
    found = []
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            if route.startswith("admin/"):
                continue  # Django's admin, documented as one line
            found += _routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            found.append("/" + route)
    return found


def _shape(path: str) -> str:
    """A path with its parameters blanked: `/api/jobs/<int:pk>/` and `/api/jobs/<id>/` agree."""
    return re.sub(r"<[^>]*>", "<>", path.split("?")[0])


def test_every_url_route_is_documented():
    documented = {
        _shape(m.group(1)) for m in re.finditer(r"`(?:[A-Z]+ )?(/[^`\s]*)", API.read_text())
    }
    routes = _routes(get_resolver().url_patterns)
    routes += ["/" + str(p.pattern) for p in websocket_urlpatterns]
    assert sorted(r for r in routes if _shape(r) not in documented) == []


# --- links ---------------------------------------------------------------------------------------


def _our_files(*suffixes: str):
    for path in ROOT.rglob("*"):
        if path.is_file() and path.suffix in suffixes and not NOT_OURS & set(path.parts):
            yield path


def test_nothing_links_outside_the_repository():
    outside = "../" + "shared"  # spelled apart so this file does not match itself
    design, contract = "shared/" + "DESIGN.md", "shared/" + "API.md"
    offenders = [
        str(path.relative_to(ROOT))
        for path in _our_files(".py", ".md", ".html", ".js", ".toml", ".txt", ".cfg")
        if any(s in path.read_text(errors="replace") for s in (outside, design, contract))
    ]
    assert offenders == []


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces
    to hyphens (`## The ledger: `bench/ledger.py`` → `the-ledger-benchledgerpy`)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(doc: Path) -> set[str]:
    """Every heading's anchor in a Markdown file (code blocks aside), a repeated one
    numbered as GitHub numbers it (`-1`, `-2`…)."""
    text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
    seen: dict[str, int] = {}
    found = set()
    for match in re.finditer(r"^#+ (.+?)\s*$", text, flags=re.MULTILINE):
        base = _slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def test_the_anchor_maker_agrees_with_github():
    assert _slug("Missed events in batches: `batch=1`") == "missed-events-in-batches-batch1"
    assert _slug("Series, a cast you keep, and places") == "series-a-cast-you-keep-and-places"
    assert "lock-order" in _anchors(ARCHITECTURE)


@pytest.mark.parametrize("doc", [README, *DOCS], ids=lambda p: p.name)
def test_relative_links_resolve(doc):
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (doc.parent / path) if path else doc
        unnamed = anchor and linked.suffix == ".md" and anchor not in _anchors(linked)
        if not linked.exists() or unnamed:
            broken.append(target)
    assert broken == []


def test_the_readme_is_a_front_door():
    """What it is, the screens, the two commands, the settings that matter most, links:
    the rest lives in docs/, said once."""
    assert len(README.read_text().splitlines()) <= 300
    assert "make run" in README.read_text() and "make test" in README.read_text()


# --- settings drift ----------------------------------------------------------------------------


def settings_nodes() -> list[ast.AST]:
    """Every node of every module of the settings package."""
    return [
        node
        for module in sorted(SETTINGS.glob("*.py"))
        for node in ast.walk(ast.parse(module.read_text()))
    ]


def settings_variables() -> set[str]:
    """The first argument of every `env(...)`, `env.bool(...)`, `env.int(...)`… in the
    settings package."""
    found = set()
    for node in settings_nodes():
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        reads_env = (isinstance(func, ast.Name) and func.id == "env") or (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "env"
        )
        first = node.args[0]
        if reads_env and isinstance(first, ast.Constant) and isinstance(first.value, str):
            found.add(first.value)
    return found


def procfile_variables() -> set[str]:
    """What the Procfile's commands read: `${NAME}` in it, and `os.environ.get("NAME"…)`
    in the launchers it runs from bin/ (bin/web reads HOST, PORT, WEB_PROCESSES)."""
    found = set(re.findall(r"\$\{([A-Z][A-Z0-9_]*)(?::?-[^}]*)?\}", PROCFILE.read_text()))
    for launcher in re.findall(r"\bbin/([\w-]+)", PROCFILE.read_text()):
        text = (PROCFILE.parent / "bin" / launcher).read_text()
        found |= set(re.findall(r"os\.environ\.get\(\"([A-Z][A-Z0-9_]*)\"", text))
    return found


def env_example_variables() -> set[str]:
    """Every `NAME=` line, commented out (`# NAME=…`) or not."""
    return set(re.findall(r"^#?\s?([A-Z][A-Z0-9_]*)=", ENV_EXAMPLE.read_text(), flags=re.MULTILINE))


def test_the_settings_parser_finds_what_settings_read():
    found = settings_variables()
    assert {"DEBUG", "DATABASE_URL", "THROTTLE_EXPORT", "RENDER_STUCK_SECONDS"} <= found
    assert {"RENDER_CONCURRENCY", "PORT"} <= procfile_variables()


def test_env_example_lists_every_variable_read():
    missing = (settings_variables() | procfile_variables()) - env_example_variables()
    assert sorted(missing) == [], "read by the code, missing from .env.example"


def test_env_example_lists_nothing_unread():
    unread = env_example_variables() - settings_variables() - procfile_variables()
    assert sorted(unread) == [], "in .env.example, read by nothing"


def test_the_settings_doc_names_every_variable():
    table = section(SETTINGS_DOC.read_text(), "Settings")
    missing = (settings_variables() | procfile_variables()) - set(re.findall(r"`(\w+)`", table))
    assert sorted(missing) == [], "read by the code, missing from docs/settings.md's table"


def test_the_readme_names_only_settings_the_code_reads():
    table = section(README.read_text(), "Settings that matter most")
    named = set(re.findall(r"^\| ((?:`[A-Z][A-Z0-9_]*`(?:, )?)+) \|", table, flags=re.MULTILINE))
    names = {n for row in named for n in re.findall(r"`([A-Z][A-Z0-9_]*)`", row)}
    assert names, "the README's settings table is gone"
    assert sorted(names - settings_variables() - procfile_variables()) == []


# --- the settings tables' defaults ------------------------------------------------------------

_UNITS = {"KB": 1024, "MB": 1024 * 1024, "GB": 1024 * 1024 * 1024}


def _number(node: ast.AST) -> float | None:
    """A default written as a number, or as arithmetic of numbers (`5 * 1024 * 1024`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Add)):
        left, right = _number(node.left), _number(node.right)
        if left is not None and right is not None:
            return left * right if isinstance(node.op, ast.Mult) else left + right
    return None


def settings_defaults() -> dict[str, object]:
    """Each setting's default where the settings write it as a value (not as an expression
    of other settings): `env.int("NAME", default=3)` → {"NAME": 3}."""
    found: dict[str, object] = {}
    for node in settings_nodes():
        if not (isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute)):
            continue
        if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "env"):
            continue
        name = node.args[0]
        default = next((k.value for k in node.keywords if k.arg == "default"), None)
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)) or default is None:
            continue
        if isinstance(default, ast.Constant):
            found[name.value] = default.value
        elif (number := _number(default)) is not None:
            found[name.value] = number
    return found


def _split(cell: str) -> list[str]:
    """A table cell's comma-separated parts, commas inside parentheses kept."""
    parts, depth, current = [], 0, ""
    for char in cell:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return [*parts, current.strip()]


def _as_written(part: str, default: object) -> bool:
    """Whether a documented default (`on`, `5 MB`, `` `rules` ``, `empty`, `30/min`…) says
    the value the settings have, a parenthesised note after it aside."""
    text = re.sub(r"\s*\(.*\)$", "", part).strip().strip("`")
    if isinstance(default, bool):
        return text == ("on" if default else "off")
    if isinstance(default, (int, float)):
        sized = re.fullmatch(r"([\d.]+)\s*(KB|MB|GB)", text)
        if sized:
            return float(sized.group(1)) * _UNITS[sized.group(2)] == default
        try:
            return float(text.replace(",", "")) == default
        except ValueError:
            return False
    if default == "":
        return text == "empty"
    return text == default


@pytest.mark.parametrize(
    ("doc", "heading"),
    [(SETTINGS_DOC, "Settings"), (README, "Settings that matter most")],
    ids=["docs-settings", "readme"],
)
def test_each_settings_table_says_each_default(doc, heading):
    """Every row of docs/settings.md's table, and of the README's short one, gives each
    variable's default as the settings have it (one default per variable, in order)."""
    table = section(doc.read_text(), heading)
    defaults = settings_defaults()
    wrong = []
    for row in re.finditer(r"^\| ((?:`[A-Z][A-Z0-9_]*`(?:, )?)+) \| ([^|]*) \|", table, re.M):
        names = re.findall(r"`([A-Z][A-Z0-9_]*)`", row.group(1))
        parts = _split(row.group(2).strip())
        for i, name in enumerate(names):
            if name not in defaults:
                continue  # an expression of other settings, or no default: said in words
            part = parts[i] if len(parts) == len(names) else None
            if len(parts) == 1 and len(names) > 1:
                part = parts[0]  # one default said for the whole row
            if part is None or not _as_written(part, defaults[name]):
                wrong.append(
                    f"{name}: {doc.name} {row.group(2).strip()!r}, settings {defaults[name]!r}"
                )
    assert wrong == []
