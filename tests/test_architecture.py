"""The rules of the house, checked on the source: the core imports no converter; a
converter imports only the IR, the registry API and ``piconv.converters.common`` (the list
below, which docs/plugins.md states too), never the pi reader; no module-level import
cycles; no C of our own and no private interfaces of libraries or of CPython."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import piconv
import pytest
from conftest import REPO

CONVERTER_MAY_IMPORT = {
    "piconv",
    "piconv.ir",
    "piconv.registry",
    "piconv.outputformat",
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
                if module == "piconv" and alias.name in FACADE:
                    # a name of the public facade is imported from the module that defines it
                    found.add(f"piconv.{FACADE[alias.name]}")
    return found


FACADE: dict[str, str] = piconv._EXPORTS
"""``from piconv import X``: the module ``core/__init__.py`` loads ``X`` from."""


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
KEEP_OFF_THE_WING = (
    "piconv.api",
    "piconv.registry",
    "piconv.ir",
    "piconv.redaction",
    "piconv.detail",
    "piconv.bulk",
    "piconv.share",
    "piconv.catalog",
)


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


def test_no_c_of_our_own() -> None:
    roots = ("core", "converters", "plugins", "scripts", "bench")
    sources = sorted(str(p.relative_to(REPO)) for root in roots for p in (REPO / root).rglob("*.[ch]"))
    assert sources == []


def _private_uses(path: Path) -> list[str]:
    """Imports of private modules (``_sha2``) and private members of imported modules,
    read as attributes or by name (``re2._Anchor``, ``getattr(re2, "_Anchor")``;
    ``os._exit``, a documented function, is the one exception)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    modules: set[str] = set()
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                modules.add((alias.asname or alias.name).split(".")[0])
                if any(part.startswith("_") for part in alias.name.split(".")):
                    found.append(alias.name)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module != "__future__":
            module = node.module or ""
            names = [module, *(f"{module}.{a.name}" for a in node.names if a.name.startswith("_"))]
            found.extend(n for n in names if any(part.startswith("_") for part in n.split(".")))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and f"{node.value.id}.{node.attr}" != "os._exit"
        ):
            found.append(f"{node.value.id}.{node.attr}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in modules
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and node.args[1].value.startswith("_")
            and not node.args[1].value.startswith("__")
        ):
            found.append(f"{node.args[0].id}.{node.args[1].value}")
    return found


PRIVATE_USES = {
    # cmark-gfm's parser and node functions, through the cffi module cmarkgfm builds:
    # cmarkgfm's public functions render a whole text and give no parse tree
    "converters/html/markdown.py": ["cmarkgfm._cmark"],
    "converters/markdown/tokens.py": ["cmarkgfm._cmark"],
}
"""The private interfaces still used, by file: the list shrinks, it does not grow."""


@pytest.mark.parametrize("path", CORE + CONVERTERS, ids=lambda p: str(p.relative_to(REPO)))
def test_no_private_interfaces(path: Path) -> None:
    assert _private_uses(path) == PRIVATE_USES.get(path.relative_to(REPO).as_posix(), [])


# The layers, top down: each imports only from layers below it (and from the unranked
# modules: the IR, records, errors, output...), never from above.
LAYERS = {
    "piconv.__main__": 4,
    "piconv.cli": 4,
    "piconv.clicommands": 4,
    "piconv.cliparse": 4,
    "piconv.redaction.cli": 4,
    "piconv.detail.cli": 4,
    "piconv.share": 4,
    "piconv.bulk.cli": 4,
    "piconv.catalog.cli": 4,
    "piconv.compare.cli": 4,
    "piconv.bulk": 3,
    "piconv.catalog": 3,
    "piconv.api": 2,
    "piconv.registry": 1,
    "piconv.plugins": 1,
    "piconv.nametable": 1,
}
PLUGINS = ("piconv.pi", "piconv.converters", "piconv.redaction", "piconv.detail")
"""Readers, filters and formats register from beside the layers: they may use the
registry's declarations (layer 1), nothing above it."""


def _rank(module: str) -> int:
    for prefix, rank in LAYERS.items():
        if module == prefix or module.startswith(prefix + "."):
            return rank
    if any(module == p or module.startswith(p + ".") for p in PLUGINS):
        return 1
    return 0


def test_layers_run_one_way() -> None:
    graph = _import_graph()
    upward = sorted(
        f"{mod} -> {dep}"
        for mod, deps in graph.items()
        for dep in deps
        if dep != "piconv" and _rank(dep) > _rank(mod) and not dep.startswith(mod + ".")
    )
    assert upward == []


def test_a_writer_never_imports_a_reader() -> None:
    """pandoc's separation: a format's writing and reading meet only in the IR."""
    graph = _import_graph()

    def reads(mod: str) -> bool:
        return mod == "piconv.pi.read" or (".read." in mod + "." and mod.startswith("piconv.converters."))

    writers = [m for m in graph if m.startswith("piconv.converters.") and not reads(m)]
    assert {
        m: sorted(d for d in graph[m] if reads(d)) for m in writers if any(reads(d) for d in graph[m])
    } == {}


def test_the_core_top_level_stays_small() -> None:
    """New code goes into the wing it belongs to (docs/architecture.md)."""
    assert len(list((REPO / "core").glob("*.py"))) <= 30


def test_every_package_is_in_the_wheel() -> None:
    """pyproject lists the packages one by one: a new one left out installs an
    incomplete piconv (an editable install hides it)."""
    import tomllib

    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        _package_of(init, root, name)
        for root, name in ((REPO / "core", "piconv"), (REPO / "converters", "piconv.converters"))
        for init in root.rglob("__init__.py")
    }
    assert found - listed == set()
