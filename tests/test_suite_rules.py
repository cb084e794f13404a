"""Rules the test suite keeps about itself.

Every test that reads the reference material (``../shared`` or ``$PICONV_SHARED``: the pi
corpus, the ASF reference examples, the sessions pi's goldens were made from) carries the
``shared`` marker, so conftest.py can skip it on a clone without the material and fail it in
CI. The check reads each test module's syntax tree: a test needs the marker when its body, its
decorators or the fixtures it asks for reach one of the names that stand for the material,
directly or through module-level constants, helpers and fixtures.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# Names that read the material: conftest's folder and corpus helpers, tests/oracle/run.py's.
MATERIAL_NAMES = frozenset({"SHARED", "corpus_files", "corpus_ids", "golden_for", "shared_dir"})
# The fixture conftest.py provides: a test or fixture asking for it by parameter needs the material.
MATERIAL_FIXTURE = "shared"


def _references(node: ast.AST) -> set[str]:
    """The names a piece of code reads (plain names, attribute names) and the parameters it
    asks for (a fixture is requested by naming it as a parameter)."""
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            found.add(sub.attr)
        elif isinstance(sub, ast.arguments):
            found.update(a.arg for a in (*sub.posonlyargs, *sub.args, *sub.kwonlyargs))
    # a local variable called ``shared`` is not the fixture: only a parameter of that name is
    if MATERIAL_FIXTURE in found and not _asks_for_fixture(node):
        found.discard(MATERIAL_FIXTURE)
    return found


def _asks_for_fixture(node: ast.AST) -> bool:
    return any(
        isinstance(sub, ast.arguments)
        and any(a.arg == MATERIAL_FIXTURE for a in (*sub.posonlyargs, *sub.args, *sub.kwonlyargs))
        for sub in ast.walk(node)
    )


def _is_shared_mark(node: ast.AST) -> bool:
    """``pytest.mark.shared`` (or ``mark.shared``), wherever it stands in an expression."""
    return any(
        isinstance(sub, ast.Attribute)
        and sub.attr == "shared"
        and isinstance(sub.value, ast.Attribute)
        and sub.value.attr == "mark"
        for sub in ast.walk(node)
    )


def _module_marked(tree: ast.Module) -> bool:
    """``pytestmark = pytest.mark.shared`` (or a list holding it) at the top of the module."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets) and _is_shared_mark(value):
            return True
    return False


def _tests(tree: ast.Module) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, bool]]:
    """Each test function with whether a class around it carries the mark."""
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith("test"):
            yield stmt, False
        elif isinstance(stmt, ast.ClassDef) and stmt.name.startswith("Test"):
            class_marked = any(_is_shared_mark(d) for d in stmt.decorator_list)
            for sub in stmt.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name.startswith("test"):
                    yield sub, class_marked


def _imported_material_names(tree: ast.Module, folder: Path) -> set[str]:
    """The names imported from another module of the suite (``from .test_x import SOURCES``)
    whose definition there reaches the material."""
    found: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module:
            source = folder / (stmt.module.replace(".", "/") + ".py")
            if source.is_file():
                reached = _material_names(ast.parse(source.read_text(encoding="utf-8")), source.parent)
                found.update(alias.asname or alias.name for alias in stmt.names if alias.name in reached)
    return found


def _material_names(tree: ast.Module, folder: Path = TESTS) -> set[str]:
    """MATERIAL_NAMES, the fixture, and every module-level name whose definition reaches them
    (in this module, or in the module of the suite it was imported from)."""
    definitions: dict[str, ast.AST] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if not stmt.name.startswith(("test", "Test")):
                definitions[stmt.name] = stmt
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name) and stmt.value is not None:
                        # a name assigned twice reaches the material if either value does
                        definitions[sub.id] = ast.Module(
                            body=[*getattr(definitions.get(sub.id), "body", []), ast.Expr(stmt.value)],
                            type_ignores=[],
                        )
    reached = set(MATERIAL_NAMES) | {MATERIAL_FIXTURE} | _imported_material_names(tree, folder)
    grew = True
    while grew:
        grew = False
        for name, node in definitions.items():
            if name not in reached and _references(node) & reached:
                reached.add(name)
                grew = True
    return reached


def unmarked_tests_reading_the_material(source: str, folder: Path = TESTS) -> list[str]:
    """The tests of one module that reach the reference material without the ``shared`` mark
    (``folder``: where the modules it imports from are)."""
    tree = ast.parse(source)
    if _module_marked(tree):
        return []
    reached = _material_names(tree, folder)
    return [
        test.name
        for test, class_marked in _tests(tree)
        if not class_marked
        and not any(_is_shared_mark(d) for d in test.decorator_list)
        and _references(test) & reached
    ]


def _test_modules() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def test_there_are_test_modules_and_some_read_the_material() -> None:
    modules = _test_modules()
    assert len(modules) > 50
    reading = [p for p in modules if _references(ast.parse(p.read_text())) & MATERIAL_NAMES]
    assert len(reading) > 20, reading


@pytest.mark.parametrize("path", _test_modules(), ids=lambda p: str(p.relative_to(TESTS)))
def test_every_test_reading_the_material_is_marked_shared(path: Path) -> None:
    unmarked = unmarked_tests_reading_the_material(path.read_text(encoding="utf-8"), path.parent)
    assert not unmarked, (
        f"{path.name}: {', '.join(unmarked)} read the reference material (SHARED, corpus_files, "
        "golden_for, the `shared` fixture...) without @pytest.mark.shared: mark them, or the whole "
        "module with `pytestmark = pytest.mark.shared`, so a clone without the material skips them "
        "and CI fails them"
    )


def test_the_rule_finds_an_unmarked_test_through_constants_helpers_and_fixtures() -> None:
    source = """
import pytest
from conftest import SHARED, corpus_files

CORPUS = corpus_files()
FIRST = CORPUS[:1]

def _path(name):
    return SHARED / name

@pytest.fixture
def doc(shared):
    return shared / "x"

@pytest.mark.parametrize("path", FIRST)
def test_through_a_constant(path): ...

def test_through_a_helper():
    _path("a")

def test_through_a_fixture(doc): ...

def test_asking_for_the_fixture(shared): ...

@pytest.mark.shared
def test_marked(shared): ...

def test_reading_nothing(tmp_path):
    shared = 1  # a local name, not the fixture
    assert shared

class TestGroup:
    def test_in_a_class(self, doc): ...
"""
    assert unmarked_tests_reading_the_material(source) == [
        "test_through_a_constant",
        "test_through_a_helper",
        "test_through_a_fixture",
        "test_asking_for_the_fixture",
        "test_in_a_class",
    ]
    marked = "import pytest\npytestmark = [pytest.mark.shared]\n" + source
    assert unmarked_tests_reading_the_material(marked) == []


def test_the_rule_follows_names_imported_from_another_test_module(tmp_path: Path) -> None:
    (tmp_path / "test_first.py").write_text(
        "from conftest import corpus_files\nSOURCES = corpus_files()\nOTHER = 1\n"
    )
    source = (
        "from .test_first import OTHER, SOURCES as PATHS\n"
        "def test_uses_sources():\n    assert PATHS\n"
        "def test_uses_other():\n    assert OTHER\n"
    )
    assert unmarked_tests_reading_the_material(source, tmp_path) == ["test_uses_sources"]
