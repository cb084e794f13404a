"""What a user installs: the sdist builds a wheel, the wheel holds what runs (and the
mapping documents piconv names), the sdist's own tests pass against that wheel, and
``piconv --version`` says whether the optional C accelerator was built."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import piconv

REPO = Path(__file__).resolve().parent.parent
SDIST_TESTS = ["tests/test_commands.py", "tests/test_exit_codes.py", "tests/test_docs.py"]
"""Run from the unpacked sdist against the installed wheel: every command case, the exit
codes, and the documents' agreement with the code."""


def _backend(hook: str, source: Path, out: Path) -> Path:
    """Calls the build backend the way a front end does (PEP 517), without a network."""
    code = f"import sys; from setuptools import build_meta as b; print(b.{hook}(sys.argv[1]))"
    done = subprocess.run(
        [sys.executable, "-c", code, str(out)], cwd=source, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out / done.stdout.strip().splitlines()[-1]


def test_the_sdist_builds_a_wheel_that_passes_the_sdists_tests(tmp_path: Path) -> None:
    import setuptools

    assert int(setuptools.__version__.split(".")[0]) >= 77, "the test extras bring setuptools 77+"
    sdist = _backend("build_sdist", REPO, tmp_path / "dist")
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path / "src", filter="data")
    (unpacked,) = (tmp_path / "src").iterdir()
    for needed in (
        "tests/conftest.py",
        "tests/cases/errors.md",
        "LICENSE",
        "CHANGELOG.md",
        "docs/formats/asf.md",
    ):
        assert (unpacked / needed).is_file(), needed

    wheel = _backend("build_wheel", unpacked, tmp_path / "wheel")
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        whl.extractall(tmp_path / "site")
    assert "piconv/py.typed" in names and "piconv/schema/ir.schema.json" in names
    assert {f"piconv/docs/formats/{p.name}" for p in (REPO / "docs" / "formats").glob("*.md")} <= set(names)
    assert not [n for n in names if n.endswith((".c", ".h")) or n.startswith(("tests/", "core/", "bench/"))]
    # The page's style and script and the vendored highlight.js with its licence.
    static = REPO / "converters" / "html" / "static"
    shipped = {
        f"piconv/converters/html/static/{p.relative_to(static).as_posix()}"
        for p in static.rglob("*")
        if p.is_file()
    }
    assert "piconv/converters/html/static/highlightjs/LICENSE" in shipped
    assert "piconv/converters/html/static/highlightjs/languages/typescript.min.js" in shipped
    assert shipped <= set(names), sorted(shipped - set(names))

    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    where = subprocess.run(
        [sys.executable, "-c", "import piconv; print(piconv.__file__)"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert where.stdout.startswith(str(tmp_path / "site")), where  # the wheel, not this checkout
    hl = subprocess.run(
        [sys.executable, "-c", "from piconv.converters.html import hljs; print(hljs.script(['typescript']))"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert 'registerLanguage("typescript"' in hl.stdout, hl.stderr[-2000:]

    listed = subprocess.run(
        [sys.executable, "-m", "piconv", "--list-formats", "--json"], env=env, capture_output=True, text=True
    )
    formats = json.loads(listed.stdout)
    for row in formats["input"] + formats["output"]:  # readers and converters
        if row["mapping_doc"].startswith("docs/"):
            assert row["mapping_doc_path"].startswith(str(tmp_path / "site")), row
            assert Path(row["mapping_doc_path"]).is_file(), row

    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SDIST_TESTS],
        cwd=unpacked,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout.splitlines()[-1]


def test_version_says_whether_the_c_accelerator_was_built() -> None:
    built = importlib.util.find_spec("piconv._speedups") is not None
    env = {k: v for k, v in os.environ.items() if k != "PICONV_PURE_PYTHON"}
    line = subprocess.run(
        [sys.executable, "-m", "piconv", "--version"], env=env, capture_output=True, text=True, check=True
    ).stdout
    state = "built" if built else "not built: pure Python, slower"
    assert line == f"piconv {piconv.__version__} (C accelerator: {state})\n"
    off = subprocess.run(
        [sys.executable, "-m", "piconv", "--version"],
        env={**env, "PICONV_PURE_PYTHON": "1"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert off == f"piconv {piconv.__version__} (C accelerator: off, PICONV_PURE_PYTHON is set)\n"


def test_version_says_not_built_where_the_accelerator_is_missing(tmp_path: Path) -> None:
    """A piconv whose build went on without a C compiler: the same package, no ``_speedups``."""
    site = tmp_path / "site"
    (site / "piconv").mkdir(parents=True)
    for entry in (REPO / "core").iterdir():
        if not entry.name.startswith("_speedups") and entry.name != "__pycache__":
            (site / "piconv" / entry.name).symlink_to(entry)
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("PICONV_PURE_PYTHON", None)
    # -S: without site-packages, where this checkout's editable install would find core/'s build
    line = subprocess.run(
        [sys.executable, "-S", "-m", "piconv", "--version"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert line == f"piconv {piconv.__version__} (C accelerator: not built: pure Python, slower)\n"
