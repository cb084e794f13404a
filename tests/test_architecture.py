"""The rules of the house (../shared/DESIGN.md), checked on the source: the core imports no
converter, a converter imports only the IR and the registry API, never the pi reader."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import REPO

CONVERTER_MAY_IMPORT = {
    "piconv",
    "piconv.ir",
    "piconv.stream",  # the input of Converter.write_stream
    "piconv.processes",  # whether to take a second process
    "piconv.registry",
    "piconv.report",
    "piconv.validation",
    "piconv.hookspecs",
    "piconv.errors",
    "piconv.schemacheck",
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
    outside = {m for m in piconv_modules if not m.startswith("piconv.converters") and m not in CONVERTER_MAY_IMPORT}
    assert not outside, f"{path.name} imports {sorted(outside)}"
