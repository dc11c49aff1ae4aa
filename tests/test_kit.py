"""The tests' own kit stays one kit: one poll-until helper (tests/support/waiting.py),
one race fixture (conftest.py's `race`), fixtures a module wants for every test said
in its `pytestmark`, and no assertion that cannot fail. Tests live beside what they
test (each area's `tests/` folder, at most 20 test files to a folder), their support
in tests/support/, and one set of fixtures (`board`, `balance`, the `run` driver) is
used everywhere instead of copies."""

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


SHARED_FIXTURES = {"board", "run"}
MOST_TEST_FILES_IN_A_FOLDER = 20


def test_no_folder_holds_more_than_twenty_test_files():
    folders: dict[pathlib.Path, int] = {}
    for source in kit_sources():
        if source.name.startswith("test_"):
            folders[source.parent] = folders.get(source.parent, 0) + 1
    crowded = {
        str(folder.relative_to(ROOT)): count
        for folder, count in folders.items()
        if count > MOST_TEST_FILES_IN_A_FOLDER
    }
    assert crowded == {}


def test_the_shared_fixtures_are_defined_once():
    """`board` takes its shape from `pytest.mark.board(...)`, the driver is `run`, a
    balance is tests/support/factories.py's `balance`: a module that defines its own
    of any of them has a copy that drifts."""

    def is_fixture(function: ast.FunctionDef) -> bool:
        return any(
            "fixture" in ast.unparse(decorator).split("(")[0]
            for decorator in function.decorator_list
        )

    copies = [
        f"{where(source, node)} {node.name}"
        for source, tree in kit_sources().items()
        if source != ROOT / "conftest.py"
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and (
            (node.name in SHARED_FIXTURES and is_fixture(node))
            or (node.name == "balance" and source != ROOT / "tests/support/factories.py")
        )
    ]
    assert copies == []


def test_only_the_driver_takes_renders_off_the_queues():
    """`run.take()`, `run.render()`, `run.take_sheet()`: not `enqueued.pop(0)` by hand."""
    pops = [
        where(source, node)
        for source, tree in kit_sources().items()
        if source != ROOT / "conftest.py"
        for node in ast.walk(tree)
        if any(is_call(node, queue, "pop") for queue in ("enqueued", "sheet_queue", "rough_queue"))
    ]
    assert pops == []


def test_support_lives_in_tests_support():
    """Beside the tests only tests: a folder named `tests` holds test modules, its
    `__init__.py` and a conftest; helpers they share are in tests/support/."""
    strays = [
        str(source.relative_to(ROOT))
        for source in kit_sources()
        if "tests" in source.relative_to(ROOT).parts
        and ROOT / "tests" / "support" not in source.parents
        and not source.name.startswith("test_")
        and source.name not in {"__init__.py", "conftest.py"}
    ]
    assert strays == []


def test_every_whole_stack_is_started_by_the_one_helper():
    """A test starts the whole stack with tests/support/stack.py's `stack` (its own
    database, its own Redis database), never by building a Stack or naming a Redis
    database itself: two stacks on one Redis database take each other's tasks."""
    helper = ROOT / "tests" / "support" / "stack.py"
    offenders = []
    for source, tree in kit_sources().items():
        if source == helper:
            continue
        for node in ast.walk(tree):
            called = isinstance(node, ast.Call) and getattr(node.func, "id", "")
            if called in ("Stack", "redis_url"):
                offenders.append(f"{where(source, node)} {called}()")
    assert offenders == []


def test_no_test_module_imports_from_another():
    """What two test modules share is support (tests/support/), not one test's names.
    The browser tests' steps (tests/e2e) are shared between its modules, one flow each."""
    borrowed = [
        where(source, node)
        for source, tree in kit_sources().items()
        if ROOT / "tests" / "e2e" not in source.parents
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").split(".")[-1].startswith("test_")
    ]
    assert borrowed == []
