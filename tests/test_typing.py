"""The public API passes ``mypy --strict`` (the configuration is pyproject.toml's
``[tool.mypy]``), and a program using it is checked against real types, not ``Any``.

mypy cannot follow the import hook of an editable install that maps ``core/`` to
``piconv``, so the package is laid out as it installs: a folder of links named ``piconv``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PUBLIC = (
    "piconv",
    "piconv.api",
    "piconv.ir",
    "piconv.registry",
    "piconv.inputformat",
    "piconv.hookspecs",
    "piconv.errors",
    "piconv.report",
    "piconv.problems",
    "piconv.output",
    "piconv.bulk",
    "piconv.bulk.runner",
    "piconv.bulk.summary",
    "piconv.converters.common",
)
"""The modules a library user or a plugin imports (README, docs/plugins.md, docs/bulk.md)."""

CLIENT = """\
from __future__ import annotations

import io

import piconv
from piconv import Converter, Option, Report, hookimpl
from piconv.bulk import Summary, run_bulk
from piconv.ir import Document, Entry


def write_turns(doc: Document, out: io.BytesIO | object, options: object, report: Report) -> None:
    pass


def entries(path: str) -> list[tuple[Entry, int]]:
    doc: Document = piconv.load(path)
    return list(doc.walk())


def convert_all(path: str) -> list[Report]:
    return [piconv.convert(path, fmt.name, io.BytesIO()) for fmt in piconv.formats()]


def options() -> tuple[Option, ...]:
    conv: Converter = piconv.get_format("markdown")
    return conv.options


def archive(src: str, dst: str) -> Summary:
    return run_bulk(src, dst, ["html"], quiet=True)


@hookimpl
def register_converters(register: object) -> None:
    pass
"""


def _layout(tmp: Path) -> Path:
    """``tmp/piconv``: links to every module of core/, and converters/ as piconv.converters."""
    pkg = tmp / "piconv"
    pkg.mkdir()
    for entry in (ROOT / "core").iterdir():
        if entry.name != "__pycache__":
            (pkg / entry.name).symlink_to(entry)
    (pkg / "converters").symlink_to(ROOT / "converters")
    return tmp


def _mypy(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    import importlib.util

    assert importlib.util.find_spec("mypy"), "mypy comes with the test extras: pip install -e '.[test]'"
    env = {k: v for k, v in os.environ.items() if k != "MYPYPATH"}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(where / ".mypy_cache"),
            "--no-error-summary",
            *args,
        ],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def laid_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _layout(tmp_path_factory.mktemp("typed"))


def test_the_public_api_passes_mypy_strict(laid_out: Path) -> None:
    args = [arg for module in PUBLIC for arg in ("-m", module)]
    done = _mypy(laid_out, *args)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_program_using_the_api_is_checked_against_its_types(laid_out: Path) -> None:
    (laid_out / "client.py").write_text(CLIENT)
    done = _mypy(laid_out, "client.py")
    assert done.returncode == 0, done.stdout + done.stderr
    # The same program with a wrong type: mypy sees the API's real types (no Any), so it fails.
    wrong = CLIENT + textwrap.dedent(
        """
        def wrong(path: str) -> int:
            return piconv.load(path).leaf_id

        bad_option = Option(flag=1, help="a number is not a flag")
        no_write = Converter(name="x", summary="x", extension=".x", media_type="text/plain")
        """
    )
    (laid_out / "wrong.py").write_text(wrong)
    done = _mypy(laid_out, "wrong.py")
    assert done.returncode == 1, done.stdout + done.stderr
    assert 'Incompatible return value type (got "str | None", expected "int")' in done.stdout
    assert 'Argument "flag" to "Option" has incompatible type "int"; expected "str"' in done.stdout
    assert 'Missing positional argument "write" in call to "Converter"' in done.stdout


def test_every_lazy_name_is_a_re_export_type_checkers_see() -> None:
    """``piconv.X`` is imported on first use (``_EXPORTS``); the ``TYPE_CHECKING`` block
    must name each one as ``from .m import X as X`` or strict importers get an error."""
    import ast

    import piconv

    tree = ast.parse((ROOT / "core" / "__init__.py").read_text())
    seen: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom), ast.unparse(stmt)
                for alias in stmt.names:
                    assert alias.asname == alias.name, (
                        f"{alias.name}: write it as '{alias.name} as {alias.name}'"
                    )
                    seen[alias.name] = (stmt.module or "").lstrip(".")
    assert seen == piconv._EXPORTS
