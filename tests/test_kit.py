"""The tests' own kit stays one kit: one poll-until helper (tests/support/waiting.py),
one race fixture (conftest.py's `race`), fixtures a module wants for every test said
in its `pytestmark`, and no assertion that cannot fail."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The stand-ins for outside services pace their fake renders with the clock.
STAND_INS = ROOT / "tests" / "support" / "providers"
WAIT_HELPER = ROOT / "tests" / "support" / "waiting.py"


def kit_sources() -> dict[pathlib.Path, ast.Module]:
    sources = [ROOT / "conftest.py", *(ROOT / "tests").rglob("*.py")]
    for app in ("ledger", "mangagen", "speculation"):
        for folder in (ROOT / app).rglob("tests"):
            sources += folder.rglob("*.py")
    return {
        source: ast.parse(source.read_text())
        for source in sources
        if STAND_INS not in source.parents and source != WAIT_HELPER
    }


def where(source: pathlib.Path, node: ast.AST) -> str:
    return f"{source.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"


def is_call(node: ast.AST, owner: str, name: str) -> bool:
    """Whether `node` is a call of `owner.name(...)`."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == name
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == owner
    )


def calls(node: ast.AST, owner: str, name: str) -> bool:
    """Whether `node` calls `owner.name(...)` anywhere inside it."""
    return any(is_call(inner, owner, name) for inner in ast.walk(node))


def test_no_poll_loop_but_the_wait_helper():
    """A loop that sleeps between looks until it sees something (a `while`, or a loop
    it breaks out of) is tests/support/waiting.wait_for's job."""

    def polls(loop: ast.AST) -> bool:
        sleeps = calls(loop, "time", "sleep") or calls(loop, "asyncio", "sleep")
        ends = isinstance(loop, ast.While) or any(
            isinstance(node, ast.Break | ast.Return) for node in ast.walk(loop)
        )
        return sleeps and ends

    loops = [
        where(source, node)
        for source, tree in kit_sources().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.While | ast.For | ast.AsyncFor) and polls(node)
    ]
    assert loops == []


def test_no_barrier_but_the_race_fixture():
    barriers = [
        where(source, node)
        for source, tree in kit_sources().items()
        if source != ROOT / "conftest.py"
        for node in ast.walk(tree)
        if is_call(node, "threading", "Barrier")
    ]
    assert barriers == []


def test_no_autouse_fixture_that_only_asks_for_others():
    """`pytest.mark.usefixtures(...)` in the module's pytestmark says that once."""

    def autouse(decorator: ast.expr) -> bool:
        return isinstance(decorator, ast.Call) and any(
            k.arg == "autouse" and isinstance(k.value, ast.Constant) and k.value.value
            for k in decorator.keywords
        )

    def empty(function: ast.FunctionDef) -> bool:
        return all(
            isinstance(s, ast.Pass)
            or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
            for s in function.body
        )

    copies = [
        where(source, node)
        for source, tree in kit_sources().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        and any(autouse(d) for d in node.decorator_list)
        and empty(node)
    ]
    assert copies == []


def test_no_assertion_of_something_always_true():
    """`assert <module>`, `assert <function>`, `assert "text"`: true whatever happened."""

    def always_true(test: ast.expr, bound: set[str]) -> bool:
        if isinstance(test, ast.Name):
            return test.id in bound
        return isinstance(test, ast.Constant | ast.Lambda | ast.JoinedStr) or (
            isinstance(test, ast.Tuple | ast.List) and bool(test.elts)
        )

    found = []
    for source, tree in kit_sources().items():
        bound = {
            (alias.asname or alias.name).split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        } | {
            node.name
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        }
        found += [
            where(source, node)
            for node in ast.walk(tree)
            if isinstance(node, ast.Assert) and always_true(node.test, bound)
        ]
    assert found == []
