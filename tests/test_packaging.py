"""What a user installs: the sdist builds one pure-Python wheel (``py3-none-any``, no
compiled code), the wheel holds what runs (and the mapping documents piconv names), its
metadata names the licence of everything it ships, with each licence file, and the sdist's
own tests pass against that wheel."""

from __future__ import annotations

import email.parser
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import piconv

REPO = Path(__file__).resolve().parent.parent
LICENSE_EXPRESSION = "MIT AND BSD-3-Clause"
LICENSE_FILES = {
    "LICENSE": "MIT License",  # piconv
    "core/redaction/GITLEAKS-LICENSE": "MIT License",  # gitleaks' rules
    "converters/html/static/highlightjs/LICENSE": "BSD 3-Clause License",  # highlight.js
}
"""Each licence file the wheel carries, by its path in the source, and how it begins."""
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
        *LICENSE_FILES,
    ):
        assert (unpacked / needed).is_file(), needed

    wheel = _backend("build_wheel", unpacked, tmp_path / "wheel")
    assert wheel.name == f"piconv-{piconv.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        whl.extractall(tmp_path / "site")
    dist_info = f"piconv-{piconv.__version__}.dist-info"
    wheel_file = (tmp_path / "site" / dist_info / "WHEEL").read_text()
    assert "Root-Is-Purelib: true" in wheel_file.splitlines()
    assert [line for line in wheel_file.splitlines() if line.startswith("Tag:")] == ["Tag: py3-none-any"]
    compiled = (".c", ".h", ".so", ".pyd", ".dylib", ".dll", ".pyx")
    assert not [n for n in names if n.endswith(compiled) or n.startswith(("tests/", "core/", "bench/"))]
    # every module of the source, in every package, is in the wheel
    for root, package in (("core", "piconv"), ("converters", "piconv/converters")):
        for module in (REPO / root).rglob("*.py"):
            assert f"{package}/{module.relative_to(REPO / root).as_posix()}" in names, module

    metadata = email.parser.Parser().parsestr((tmp_path / "site" / dist_info / "METADATA").read_text())
    assert metadata["License-Expression"] == LICENSE_EXPRESSION
    assert sorted(metadata.get_all("License-File") or []) == sorted(LICENSE_FILES)
    for path, opening in LICENSE_FILES.items():
        shipped_licence = tmp_path / "site" / dist_info / "licenses" / path
        assert shipped_licence.read_text().startswith(opening), path
        assert shipped_licence.read_bytes() == (REPO / path).read_bytes(), path

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


def test_version_is_the_version_alone() -> None:
    line = subprocess.run(
        [sys.executable, "-m", "piconv", "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert line == f"piconv {piconv.__version__}\n"
