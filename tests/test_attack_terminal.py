"""Nothing a session or a file name holds can drive the terminal piconv prints to.

A directory run escapes what it prints (terminal.py); these hold the same for a single
conversion's summary and error lines, ``piconv inspect`` and ``piconv validate``: an
escape sequence (retitle, clear, recolour) or a forged line from the input is printed as
an escape, never as the control character itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .conftest import session_bytes

ESC = "\x1b]0;OWNED\x07\x1b[2J\x1b[31mred\r\x9b1m"


def _run(*args: str | os.PathLike[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "piconv", *map(str, args)],
        capture_output=True,
        cwd=cwd,
        timeout=120,
        env={**os.environ, "PYTHONUTF8": "0"},
    )


def _hostile_session() -> bytes:
    header = {
        "type": "session",
        "version": 3,
        "id": "sid" + ESC,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/work" + ESC,
    }
    return session_bytes(
        {"type": "session_info", "id": "n1", "parentId": None, "timestamp": "x", "name": "name" + ESC},
        {
            "type": "message",
            "id": "a1",
            "parentId": "n1",
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "assistant", "content": "hi", "provider": ESC, "model": ESC},
        },
        {"type": "label", "id": "l1", "parentId": "a1", "targetId": "a1", "label": "lab" + ESC},
        ("{bad " + ESC).encode(),
        header=header,
    )


def _clean(out: bytes) -> None:
    for byte in (b"\x1b", b"\x07", b"\r", "\x9b".encode()):
        assert byte not in out, out


def test_a_single_conversion_escapes_the_file_name_in_its_summary_line(tmp_path: Path) -> None:
    name = "s\x1b]0;title\x07.jsonl"
    (tmp_path / name).write_bytes(_hostile_session())
    run = _run(name, "--to", "markdown", "-o", "out.md", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    _clean(run.stderr)
    assert b"s\\x1b]0;title\\x07.jsonl" in run.stderr


def test_an_error_line_escapes_the_file_name(tmp_path: Path) -> None:
    name = "e\x1b[2J.jsonl"
    (tmp_path / name).write_bytes(b"not a session\n")
    run = _run(name, "--to", "markdown", "-o", "out.md", cwd=tmp_path)
    assert run.returncode == 3
    _clean(run.stderr)
    assert b"e\\x1b[2J.jsonl" in run.stderr


def test_inspect_escapes_what_the_session_holds(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_bytes(_hostile_session())
    run = _run("inspect", "s.jsonl", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    _clean(run.stdout)
    assert b"sid\\x1b]0;OWNED\\x07" in run.stdout
    # one row per fact: a carriage return or line break cannot forge a row
    assert run.stdout.count(b"\nname:") == 1


def test_validate_escapes_the_file_name_and_the_problems(tmp_path: Path) -> None:
    name = "v\x1b[31m.jsonl"
    (tmp_path / name).write_bytes(b'{"\x1b]0;x\x07": 1}\n')
    run = _run("validate", name, "--format", "asf", cwd=tmp_path)
    assert run.returncode == 5
    _clean(run.stdout + run.stderr)
    assert b"v\\x1b[31m.jsonl" in run.stderr


def test_bidirectional_overrides_are_shown_escaped() -> None:
    from piconv.terminal import shown

    assert shown("a\u202egpj.exe\u2066b\u2069") == "a\\u202egpj.exe\\u2066b\\u2069"
