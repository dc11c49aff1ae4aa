"""The apps' dependency direction: ledger ← mangagen ← speculation."""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The project package's composition root may import every app.
COMPOSITION_ROOT = {"settings", "settings.py", "urls.py", "asgi.py", "celery.py", "routing.py"}


def imported_packages(package: str) -> dict[pathlib.Path, set[str]]:
    found = {}
    for source in (ROOT / package).rglob("*.py"):
        in_root = package == "mangagen" and source.parent.name == "mangagen"
        if in_root and source.name in COMPOSITION_ROOT:
            continue
        if package == "mangagen" and source.parent == ROOT / "mangagen" / "settings":
            continue  # the settings package is the composition root too
        names = set()
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
        found[source] = names
    return found


@pytest.mark.parametrize(
    "package, forbidden",
    [
        ("ledger", {"mangagen", "speculation"}),
        ("mangagen", {"speculation"}),
        # The benchmarks use the tests' support (tests/support/stack.py), never the reverse.
        ("tests", {"bench"}),
    ],
)
def test_dependency_direction(package, forbidden):
    offenders = {
        str(path.relative_to(ROOT)): sorted(names & forbidden)
        for path, names in imported_packages(package).items()
        if names & forbidden
    }
    assert offenders == {}


# Row locks: every SELECT … FOR UPDATE goes through an app's lock_objects.py, where
# each lock has its name, its order_by and its place in the one lock order
# (docs/architecture.md, "Lock order").
LOCKING_PACKAGES = ("ledger", "mangagen", "speculation")


def calls_select_for_update(source: pathlib.Path) -> bool:
    return any(
        isinstance(node, ast.Attribute) and node.attr == "select_for_update"
        for node in ast.walk(ast.parse(source.read_text()))
    )


def test_row_locks_only_in_lock_objects():
    offenders = []
    for package in LOCKING_PACKAGES:
        for source in (ROOT / package).rglob("*.py"):
            path = source.relative_to(ROOT).as_posix()
            if {"tests", "migrations"} & set(source.parts) or source.name == "lock_objects.py":
                continue
            if calls_select_for_update(source):
                offenders.append(path)
    assert offenders == []


def test_the_guard_sees_an_inline_lock(tmp_path):
    inline = tmp_path / "services.py"
    inline.write_text("def f(pk):\n    return Job.objects.select_for_update().get(pk=pk)\n")
    assert calls_select_for_update(inline)


# The studio's layers, inside mangagen: a module may import its own area, one of its
# own layer, or one below; never one above. Imports inside functions count too.
# Settled from the code (#29): views and the API over the orchestration of what spans
# apps (deleting a comic, pruning) over the features over the storyboard's own edits
# (storyboards/services.py: its lists of characters and places) over the comic's data
# (storyboards, places, and the characters' models and selectors: a panel's hash reads
# its sheets) over what draws and writes (renderers, drafting, lettering, formats) over
# the shared kernel. Renderers draw a spec and know no job or storyboard.
ENTRY, ORCHESTRATION, FEATURES, COMIC_EDITS, COMIC, DRAWING, KERNEL = 6, 5, 4, 3, 2, 1, 0
LAYERS = {
    "views": ENTRY,
    "api": ENTRY,
    "web": ENTRY,  # the websocket consumer, the ASGI handler, the daphne server
    "admin.py": ENTRY,
    "management": ENTRY,
    "templatetags": ENTRY,
    "tasks.py": ENTRY,  # the periodic tasks: prune, sweep
    "orchestration": ORCHESTRATION,  # deleting a comic, pruning
    "jobs": FEATURES,
    # Render kinds: what a kind declares, the one worker path, the one task policy.
    "render_kinds": FEATURES,
    "characters": FEATURES,
    "pages": FEATURES,
    "series": FEATURES,
    "translations": FEATURES,
    "publishing": FEATURES,  # reading links: a snapshot of the pages of a comic or a series
    "library": FEATURES,
    "roughs": FEATURES,  # a free draft of each panel, drawn before any final is paid for
    "payments": FEATURES,
    "accounts": FEATURES,
    "storyboards/services.py": COMIC_EDITS,
    "storyboards": COMIC,
    "places": COMIC,
    "characters/models.py": COMIC,
    "characters/selectors.py": COMIC,
    "characters/picture_budget.py": COMIC,  # counts sheets, places and the library's copies
    "library/models.py": COMIC,
    "characters/errors.py": COMIC,
    "renderers": DRAWING,  # procedural/ (by what it draws), the providers, gpu_pool.py
    "drafting": DRAWING,
    "lettering": DRAWING,
    "formats": DRAWING,
    "storyboards/limits.py": KERNEL,  # numbers every app validates with; imports nothing
    # Errors, storage, queues, the broker, the chat client, quotas and the drawing budget,
    # a paid render's hold and wording, the render retry rule, for every area alike.
    "kernel": KERNEL,
    "celery.py": KERNEL,
    "observability": KERNEL,
    # /metrics: the view and the collector it runs at each scrape (the GPU pool's state).
    "observability/exposition.py": ENTRY,
    "observability/collectors.py": ENTRY,
}
# Whatever an app's folder holds, these files answer requests.
ENTRY_FILES = {"api.py", "views.py", "urls.py", "admin.py", "serializers.py", "consumers.py"}
# Wiring of the whole studio, which may import every layer.
WIRING = COMPOSITION_ROOT | {
    "settings_test.py",
    "wsgi.py",
    "models.py",
    "apps.py",
}
# Known upward imports, each to go.
LAYER_ALLOWANCE = {
    # The chat drafter checks its answer with the storyboard's write serializer.
    "mangagen/drafting/openai_chat.py",
}


def module_name(source: pathlib.Path) -> list[str]:
    parts = list(source.relative_to(ROOT).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def imported_modules(source: pathlib.Path) -> set[str]:
    """Every module `source` imports, anywhere in it, relative imports resolved: for
    `from x import y`, x.y (place_of takes it for x when y is no module)."""
    package = module_name(source)
    if source.name != "__init__.py":
        package = package[:-1]
    found = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found |= {f"{module}.{alias.name}" for alias in node.names}
    return found


def place_of(module: str) -> tuple[str, int] | None:
    """The area (an app's folder, or a top-level module) and layer of a mangagen
    module; None outside mangagen or for the wiring."""
    parts = module.split(".")
    if parts[0] != "mangagen" or len(parts) < 2:
        return None
    path = pathlib.Path(ROOT, *parts)
    if not path.is_dir() and not path.with_suffix(".py").exists():
        return place_of(".".join(parts[:-1]))  # a name imported from a module
    relative = "/".join(parts[1:]) + ("" if path.is_dir() else ".py")
    area = parts[1] if path.is_dir() or len(parts) > 2 else relative
    if (len(parts) == 2 and relative in WIRING) or parts[1] == "settings":
        return None
    if parts[-1] + ".py" in ENTRY_FILES or parts[1] in {"views", "api"}:
        return area, ENTRY
    for prefix in (relative, area):
        if prefix in LAYERS:
            return area, LAYERS[prefix]
    raise AssertionError(f"{module} has no layer in LAYERS")


def upward_imports() -> dict[str, list[str]]:
    found = {}
    for source in (ROOT / "mangagen").rglob("*.py"):
        if {"tests", "migrations"} & set(source.parts):
            continue
        place = place_of(".".join(module_name(source)))
        if place is None:
            continue
        above = sorted(
            target
            for target in imported_modules(source)
            if (theirs := place_of(target)) is not None
            and theirs[0] != place[0]
            and theirs[1] > place[1]
        )
        if above:
            found[source.relative_to(ROOT).as_posix()] = above
    return found


def test_studio_layers():
    offenders = {
        path: targets
        for path, targets in upward_imports().items()
        if not any(path.startswith(allowed) for allowed in LAYER_ALLOWANCE)
    }
    assert offenders == {}


# Renderers draw a spec: they know no job, storyboard, character or place row, and nothing
# of paying (a paid render's words are marked in paid_render.py, not imported here).
RENDERERS_NEVER_IMPORT = (
    "ledger",
    "mangagen.kernel.paid_render",
    "mangagen.kernel.credit_history",
    "mangagen.kernel.quotas",
    "mangagen.payments",
    "mangagen.jobs",
    "mangagen.storyboards",
    "mangagen.characters",
    "mangagen.places",
)


def test_renderers_know_no_job_storyboard_or_payment():
    offenders = {}
    for source in (ROOT / "mangagen" / "renderers").rglob("*.py"):
        if "tests" in source.parts:
            continue
        found = sorted(
            module
            for module in imported_modules(source)
            if any(module == n or module.startswith(f"{n}.") for n in RENDERERS_NEVER_IMPORT)
        )
        if found:
            offenders[source.relative_to(ROOT).as_posix()] = found
    assert offenders == {}


def test_relative_and_function_level_imports_are_resolved():
    translations = imported_modules(ROOT / "mangagen/translations/services.py")
    assert "mangagen.translations.selectors" in translations  # from . import selectors
    assert "mangagen.translations.models.Translation" in translations  # from .models import …
    drafter = imported_modules(ROOT / "mangagen/drafting/openai_chat.py")
    assert "mangagen.storyboards.serializers.StoryboardWriteSerializer" in drafter  # in a def
    assert place_of("mangagen.storyboards.services.rehash_storyboard") == (
        "storyboards",
        COMIC_EDITS,
    )
    assert place_of("mangagen.orchestration.comic_deletion") == ("orchestration", ORCHESTRATION)
    assert place_of("mangagen.places.api") == ("places", ENTRY)


# A name with a leading underscore is its module's own: no other module imports it
# (production code and tests alike). What other modules call is public, named for what
# it does (mangagen/jobs/steps.py is the jobs package's API).
PUBLIC_NAMES_PACKAGES = ("mangagen", "ledger", "speculation", "tests")


def underscore_imports(source: pathlib.Path) -> list[str]:
    """Each `from x import _y` in `source`, as `x._y` (dunder names are not private)."""
    return [
        f"{node.module or '.'}.{alias.name}"
        for node in ast.walk(ast.parse(source.read_text()))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]


def test_no_module_imports_another_modules_private_names():
    offenders = {}
    for package in PUBLIC_NAMES_PACKAGES:
        for source in (ROOT / package).rglob("*.py"):
            if "migrations" in source.parts:
                continue
            if found := underscore_imports(source):
                offenders[source.relative_to(ROOT).as_posix()] = found
    assert offenders == {}


def test_the_guard_sees_a_private_import(tmp_path):
    source = tmp_path / "rendering.py"
    source.write_text("from .steps import _deliver, public\nfrom x import __version__\n")
    assert underscore_imports(source) == ["steps._deliver"]


# The project package's own folder holds the composition root and little else: shared
# code lives in kernel/, the web edge in web/ and views/, cross-area work in
# orchestration/ (docs/architecture.md, "The package map").
ROOT_MODULES = {
    "__init__.py",
    "settings_test.py",
    "urls.py",
    "routing.py",
    "asgi.py",
    "wsgi.py",
    "celery.py",
    "apps.py",
    "models.py",  # the app's models, gathered for Django
    "admin.py",  # the admin site's wiring
    "tasks.py",  # the project's periodic tasks
}


def test_the_project_package_holds_the_root_and_little_else():
    loose = {source.name for source in (ROOT / "mangagen").glob("*.py")}
    assert loose <= ROOT_MODULES
    assert len(ROOT_MODULES) <= 12


def test_the_settings_are_a_package_of_short_modules():
    """Settings by concern (docs/settings.md): no one module holds them all again."""
    modules = sorted((ROOT / "mangagen" / "settings").glob("*.py"))
    assert len(modules) >= 5
    assert {
        m.name: len(m.read_text().splitlines())
        for m in modules
        if len(m.read_text().splitlines()) >= 300
    } == {}


# Small functions: none of the product's is
# over 80 lines, from its `def` to its last line (tests and migrations aside).
MAX_FUNCTION_LINES = 80
PRODUCT_PACKAGES = ("ledger", "mangagen", "speculation")  # the benchmarks are not the product


def long_functions(source: pathlib.Path, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """Each function of `source` longer than `limit` lines, as `name (lines)`."""
    return [
        f"{node.name} ({node.end_lineno - node.lineno + 1})"
        for node in ast.walk(ast.parse(source.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > limit
    ]


def test_no_product_function_is_over_80_lines():
    offenders = {}
    for package in PRODUCT_PACKAGES:
        for source in (ROOT / package).rglob("*.py"):
            if {"tests", "migrations"} & set(source.parts):
                continue
            if found := long_functions(source):
                offenders[source.relative_to(ROOT).as_posix()] = found
    assert offenders == {}


def test_the_guard_counts_a_long_function(tmp_path):
    source = tmp_path / "long.py"
    source.write_text("def long():\n" + "    x = 1\n" * 80 + "\n\ndef short():\n    pass\n")
    assert long_functions(source) == ["long (81)"]
