"""What the command line prints never fails on what a session or a file name holds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import session_bytes

LONE = (
    session_bytes(
        {
            "type": "message",
            "id": "b",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        },
    )
    .replace(b'"hi"', b'"hi \\udc00"')
    .replace(b'"cwd":"/work"', b'"cwd":"/work\\ud800"')
)


def piconv(*args: str | bytes, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "piconv", *args], input=stdin, capture_output=True)


def test_inspect_shows_a_lone_surrogate_escaped() -> None:
    result = piconv("inspect", "-", stdin=LONE)
    assert result.returncode == 0, result.stderr
    assert b"/work\\ud800" in result.stdout


def test_a_file_name_that_is_not_utf8_is_shown_escaped(tmp_path: Path) -> None:
    name = bytes(tmp_path) + b"/\xff.jsonl"
    with open(name, "wb") as handle:
        handle.write(b"")
    result = piconv(name, "--to", "ir")
    assert result.returncode == 3
    # the byte itself, as a directory run shows it (terminal.py)
    assert b"\\xff.jsonl: empty file" in result.stderr and b"Traceback" not in result.stderr


INFINITE = (
    session_bytes(
        {
            "type": "message",
            "id": "b",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "hi SURROGATE", "timestamp": 1, "odd": 1},
        },
    )
    .replace(b'"odd":1', b'"odd":1e400')
    .replace(b"SURROGATE", b"\\ud800")
)


def test_inspect_json_never_writes_infinity() -> None:
    result = piconv("inspect", "-", "--json", stdin=INFINITE)
    assert result.returncode == 0, result.stderr
    assert b"Infinity" not in result.stdout and b"NaN" not in result.stdout
    json.loads(result.stdout)  # strict JSON


def test_pi_writes_an_infinite_number_as_null_and_reports_it(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    report = tmp_path / "report.json"
    result = piconv("-", "--to", "pi", "-o", str(out), "--report", str(report), stdin=INFINITE)
    assert result.returncode == 0, result.stderr
    # an unchanged line is written as it was read, 1e400 and all (pi reads it as Infinity)
    assert out.read_bytes().splitlines()[1] == INFINITE.splitlines()[1]
    assert "number-written-as-null" not in {i["code"] for i in json.loads(report.read_text())["losses"]}
    # a line written anew (here: redacted) cannot hold it: null, as JSON.stringify writes it
    result = piconv(
        "-", "--to", "pi", "--redact-value", "hi", "-o", str(out), "--report", str(report), stdin=INFINITE
    )
    assert result.returncode == 0, result.stderr
    assert b'"odd":null' in out.read_bytes() and b"Infinity" not in out.read_bytes()
    losses = json.loads(report.read_text())["losses"]
    assert any(item["code"] == "number-written-as-null" and item["lines"] == [2] for item in losses)
