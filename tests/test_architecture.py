"""The apps' dependency direction: ledger ← mangagen ← speculation."""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The project package's composition root may import every app.
COMPOSITION_ROOT = {"settings.py", "urls.py", "asgi.py", "celery.py", "routing.py"}


def imported_packages(package: str) -> dict[pathlib.Path, set[str]]:
    found = {}
    for source in (ROOT / package).rglob("*.py"):
        in_root = package == "mangagen" and source.parent.name == "mangagen"
        if in_root and source.name in COMPOSITION_ROOT:
            continue
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
# Being moved by another branch (the jobs package split, the paid-render module of
# characters); each gets its lock_objects.py there, and leaves this set.
NOT_YET = {
    "mangagen/jobs/",  # services.py, retention.py
    "mangagen/characters/",  # services.py
}


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
            if any(path.startswith(folder) for folder in NOT_YET):
                continue
            if calls_select_for_update(source):
                offenders.append(path)
    assert offenders == []


def test_the_guard_sees_an_inline_lock(tmp_path):
    inline = tmp_path / "services.py"
    inline.write_text("def f(pk):\n    return Job.objects.select_for_update().get(pk=pk)\n")
    assert calls_select_for_update(inline)
