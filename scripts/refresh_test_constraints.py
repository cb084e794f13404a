"""Write requirements/test-constraints.txt: the exact version of every package the test
environment installs, on each Python piconv supports.

    python scripts/refresh_test_constraints.py [PYTHON ...]

Each interpreter (default: python3.10 to python3.13, those found on PATH) gets a fresh
virtualenv in a temporary folder, ``pip install -e '.[test]'`` with nothing pinned, and
``pip freeze --all --exclude-editable`` (``--all``: setuptools is a test dependency; pip
itself is left out). A version every interpreter chose is written plain; one that differs
(a package that dropped an old Python) is written once per range of Python versions, with
an environment marker.

Run it only to move the pins on purpose; then run the tests, and regenerate what a pin
feeds (``python scripts/gen_openai_schema.py`` for the openai and pydantic pins).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "requirements" / "test-constraints.txt"
PYTHONS = ("python3.10", "python3.11", "python3.12", "python3.13")
HEADER = """\
# The exact versions the test environment installs, transitive dependencies included, so
# that the suite gives the same verdict on any machine and on any day. Used by the test
# command (README, .ci/test-command):
#
#   pip install -c requirements/test-constraints.txt -e '.[test]' && python -m pytest
#
# pyproject.toml keeps its open ranges for users; only the tests are pinned here.
# Written by scripts/refresh_test_constraints.py (a fresh virtualenv, pip freeze) on each of
# {pythons}; a pin with a marker is one that Python range resolved differently.
#
# To refresh on purpose: python scripts/refresh_test_constraints.py [PYTHON ...], run the
# tests, and regenerate what a pin feeds: python scripts/gen_openai_schema.py (the committed
# OpenAI schema is generated under the openai and pydantic pinned here).
"""


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _minor(python: str) -> str:
    code = "import sys; print('%d.%d' % sys.version_info[:2])"
    return subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def _freeze(python: str) -> dict[str, str]:
    """name -> 'Name==version' of a fresh virtualenv holding piconv's test extras."""
    with tempfile.TemporaryDirectory(prefix="piconv-pins-") as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
        subprocess.run([*pip, "install", "-q", "-e", f"{REPO}[test]"], check=True, cwd=tmp)
        lines = subprocess.run(
            [*pip, "freeze", "--all", "--exclude-editable"], capture_output=True, text=True, check=True
        ).stdout.splitlines()
    pins = {}
    for line in lines:
        if "==" in line and not line.startswith("#"):
            name = _canonical(line.split("==", 1)[0])
            if name != "pip":
                pins[name] = line.strip()
    return pins


def _ranges(minors: list[str], chosen: list[str | None]) -> list[tuple[str, str]]:
    """(pin, marker) for each run of consecutive Python versions that chose the same pin."""
    out: list[tuple[str, str]] = []
    start = 0
    for i in range(1, len(minors) + 1):
        if i == len(minors) or chosen[i] != chosen[start]:
            pin = chosen[start]
            if pin is not None:
                low = f'python_version >= "{minors[start]}"' if start else ""
                high = f'python_version < "{minors[i]}"' if i < len(minors) else ""
                out.append((pin, " and ".join(part for part in (low, high) if part)))
            start = i
    return out


def render(frozen: dict[str, dict[str, str]]) -> str:
    minors = sorted(frozen, key=lambda v: tuple(map(int, v.split("."))))
    names = sorted({name for pins in frozen.values() for name in pins})
    lines = []
    for name in names:
        for pin, marker in _ranges(minors, [frozen[m].get(name) for m in minors]):
            lines.append(f"{pin} ; {marker}" if marker else pin)
    return HEADER.format(pythons="Python " + ", ".join(minors)) + "\n".join(lines) + "\n"


def main() -> int:
    pythons = sys.argv[1:] or [p for p in PYTHONS if shutil.which(p)]
    frozen = {}
    for python in pythons:
        minor = _minor(python)
        print(f"freezing the test environment of Python {minor} ({python})", file=sys.stderr)
        frozen[minor] = _freeze(python)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(render(frozen))
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
