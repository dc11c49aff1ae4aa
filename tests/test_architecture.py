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
