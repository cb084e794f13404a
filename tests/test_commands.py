"""Command tests in the style of pandoc's test/command: readable cases in tests/cases/*.md.

Each fenced block is one case:

    % piconv ARGS...            the command (run in a temporary directory)
    < a line of standard input  (any number; optional)
    expected standard output    (exactly, every line)
    => exit N                   (optional; default 0)
    => stderr: TEXT             (optional; standard error must contain TEXT)

``{examples}`` in the command stands for the repository's examples folder. The cases read
nothing else, so they run wherever the code is, the unpacked sdist included
(tests/test_packaging.py runs them there).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

CASES = sorted((REPO / "tests" / "cases").glob("*.md"))
BLOCK = re.compile(r"^```\n(% .*?)^```$", re.S | re.M)


def _cases() -> list[tuple[str, str]]:
    found = []
    for path in CASES:
        for n, match in enumerate(BLOCK.finditer(path.read_text()), 1):
            found.append((f"{path.stem}-{n}", match.group(1)))
    return found


@pytest.mark.parametrize(("name", "block"), _cases(), ids=[c[0] for c in _cases()])
def test_command(name: str, block: str, tmp_path: Path) -> None:
    lines = block.splitlines()
    command = lines[0][2:].format(examples=REPO / "examples")
    stdin, stdout, exit_code, stderr_parts = [], [], 0, []
    for line in lines[1:]:
        if line.startswith("< ") or line == "<":
            stdin.append(line[2:])
        elif line.startswith("=> exit "):
            exit_code = int(line[len("=> exit ") :])
        elif line.startswith("=> stderr: "):
            stderr_parts.append(line[len("=> stderr: ") :])
        else:
            stdout.append(line)
    argv = shlex.split(command)
    assert argv[0] == "piconv"
    result = subprocess.run(
        [sys.executable, "-m", "piconv", *argv[1:]],
        input=("\n".join(stdin) + "\n").encode() if stdin else b"",
        capture_output=True,
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "100"},
    )
    out = result.stdout.decode(errors="replace")
    err = result.stderr.decode(errors="replace")
    assert (result.returncode, out) == (exit_code, "\n".join(stdout) + ("\n" if stdout else "")), err
    for part in stderr_parts:
        assert part in err
    assert "Traceback" not in err


def test_there_are_cases() -> None:
    assert len(_cases()) >= 10
