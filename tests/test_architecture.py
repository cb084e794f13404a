"""The rules of the house, checked on the source: the core imports no converter; a
converter imports only the IR, the registry API and ``piconv.converters.common`` (the list
below, which docs/plugins.md states too), never the pi reader; no module-level import
cycles; no C beyond the one optional accelerator."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from conftest import REPO

CONVERTER_MAY_IMPORT = {
    "piconv",
    "piconv.ir",
    "piconv.registry",
    "piconv.report",
    "piconv.validation",
    "piconv.hookspecs",
    "piconv.errors",
    "piconv.jsonl",
    "piconv.converters.common",
}


def _imports(path: Path, package: str) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.add(module)
    return found


def _package_of(path: Path, root: Path, name: str) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    if parts[-1] == "__init__":
        return ".".join((name, *parts[:-1]))
    return ".".join((name, *parts[:-1])) if len(parts) > 1 else name


CORE = sorted((REPO / "core").rglob("*.py"))
CONVERTERS = sorted((REPO / "converters").rglob("*.py"))


@pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(REPO)))
def test_the_core_imports_no_converter(path: Path) -> None:
    imports = _imports(path, _package_of(path, REPO / "core", "piconv"))
    assert not {m for m in imports if m.startswith("piconv.converters")}


@pytest.mark.parametrize("path", CONVERTERS, ids=lambda p: str(p.relative_to(REPO)))
def test_a_converter_imports_only_the_ir_and_the_registry_api(path: Path) -> None:
    imports = _imports(path, _package_of(path, REPO / "converters", "piconv.converters"))
    piconv_modules = {m for m in imports if m == "piconv" or m.startswith("piconv.")}
    own = ".".join(_package_of(path, REPO / "converters", "piconv.converters").split(".")[:3])
    outside = {
        m
        for m in piconv_modules
        if not (
            m == own
            or m.startswith(own + ".")
            or m in CONVERTER_MAY_IMPORT
            or m.startswith("piconv.converters.common.")
        )
    }
    assert not outside, f"{path.name} imports {sorted(outside)}"


def test_docs_state_the_same_list_of_what_a_converter_may_import() -> None:
    text = (REPO / "docs" / "plugins.md").read_text()
    section = text[text.index("## What a converter may import") :]
    section = section[: section.index("\n## ", 1)] if "\n## " in section[1:] else section
    listed = set(re.findall(r"`(piconv(?:\.[a-z_.]+)?)`", section))
    assert listed == CONVERTER_MAY_IMPORT


def _every_import(path: Path, package: str, modules: set[str]) -> set[str]:
    """Every module ``path`` imports, wherever the import stands (at the top, inside a
    function, under ``TYPE_CHECKING``): ``from X import name`` counts as importing the
    module ``X.name`` when there is one, else ``X`` itself."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            for alias in node.names:
                found.add(f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules else module)
    return found


def _modules() -> dict[str, tuple[Path, str]]:
    """Every module: dotted name -> (path, the package its relative imports start from)."""
    found = {}
    for root, name, files in (
        (REPO / "core", "piconv", CORE),
        (REPO / "converters", "piconv.converters", CONVERTERS),
    ):
        for path in files:
            parts = path.relative_to(root).with_suffix("").parts
            dotted = ".".join((name, *parts[:-1])) if parts[-1] == "__init__" else ".".join((name, *parts))
            found[dotted] = (path, _package_of(path, root, name))
    return found


def _import_graph() -> dict[str, set[str]]:
    modules = _modules()
    names = set(modules)
    return {
        # a module's own ancestor packages are imported first by Python itself: not an edge
        mod: {
            m
            for m in _every_import(path, package, names)
            if m in modules and not (mod == m or mod.startswith(m + "."))
        }
        for mod, (path, package) in modules.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(mod: str) -> None:
        index[mod] = low[mod] = len(index)
        stack.append(mod)
        on_stack.add(mod)
        for dep in sorted(graph[mod]):
            if dep not in index:
                visit(dep)
                low[mod] = min(low[mod], low[dep])
            elif dep in on_stack:
                low[mod] = min(low[mod], index[dep])
        if low[mod] == index[mod]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == mod:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for mod in sorted(graph):
        if mod not in index:
            visit(mod)
    return found


def test_no_import_cycles_counting_every_import() -> None:
    graph = _import_graph()
    assert {"piconv.registry", "piconv.output"} <= graph["piconv.api"]  # the graph is not empty
    assert _cycles(graph) == []


def test_cycles_are_found() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


WING = "piconv.pi"
KEEP_OFF_THE_WING = ("piconv.api", "piconv.registry", "piconv.ir", "piconv.redaction", "piconv.bulk")


def test_the_pi_wing_is_a_plugin_like_any_other() -> None:
    """The public API, the registry, the IR, redaction and directory runs reach pi's reading
    and writing only through the registry, as they reach any plugin's."""
    graph = _import_graph()
    offenders = {
        mod: sorted(m for m in deps if m == WING or m.startswith(WING + "."))
        for mod, deps in graph.items()
        if any(mod == k or mod.startswith(k + ".") for k in KEEP_OFF_THE_WING)
    }
    assert {mod: deps for mod, deps in offenders.items() if deps} == {}


def test_no_c_but_the_one_accelerator() -> None:
    roots = ("core", "converters", "plugins", "scripts", "bench")
    sources = sorted(str(p.relative_to(REPO)) for root in roots for p in (REPO / root).rglob("*.[ch]"))
    assert sources == ["core/_speedups.c"]
