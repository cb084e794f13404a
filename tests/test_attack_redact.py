"""Redaction leaks nothing through the path of the session file: the IR dump and the
archive database write that path, and it holds the home directory and the user name.
The output still never lands on the input."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import piconv
import pytest

from .conftest import session_bytes

USER = "alicewonder"


def _session(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home" / USER
    source = home / ".pi" / "agent" / "sessions" / "--work--" / "s.jsonl"
    source.parent.mkdir(parents=True)
    source.write_bytes(
        session_bytes(
            {
                "type": "message",
                "id": "a1",
                "parentId": None,
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": {"role": "user", "content": "hello"},
            },
            header={
                "type": "session",
                "version": 3,
                "id": "11111111-2222-4333-8444-555555555555",
                "timestamp": "2026-01-01T00:00:00.000Z",
                "cwd": f"/home/{USER}/work",
            },
        )
    )
    return home, source


def test_the_ir_dump_of_a_redacted_session_names_no_home_and_no_user(tmp_path: Path) -> None:
    home, source = _session(tmp_path)
    result = piconv.redact(piconv.load(str(source)), homes=(str(home),), users=(USER,))
    data = piconv.convert_to_bytes(result.document, "ir")
    assert USER.encode() not in data
    assert b'"source_path":"~/.pi/agent/sessions/--work--/s.jsonl"' in data


def test_the_archive_of_a_redacted_run_names_no_home_and_no_user(tmp_path: Path) -> None:
    home, _source = _session(tmp_path)
    out = tmp_path / "out"
    env = {**os.environ, "HOME": str(home), "USER": USER, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    run = subprocess.run(
        [
            *(sys.executable, "-m", "piconv", str(home / ".pi" / "agent" / "sessions")),
            *("--to", "sqlite", "--to", "html", "--redact", "-o", str(out), "-q", "--jobs", "1"),
        ],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    with sqlite3.connect(out / "archive.db") as conn:
        (stored,) = conn.execute("select source from sessions").fetchone()
    # the home directory is found in the session's cwd (the test's HOME is no real one)
    assert USER not in stored and stored.endswith("~/.pi/agent/sessions/--work--/s.jsonl"), stored
    for path in out.rglob("*"):
        if path.is_file():
            assert USER.encode() not in path.read_bytes(), path


def test_a_redacted_document_still_knows_its_input(tmp_path: Path) -> None:
    home, source = _session(tmp_path)
    before = source.read_bytes()
    result = piconv.redact(piconv.load(str(source)), homes=(str(home),), users=(USER,))
    assert USER not in (result.document.session.source_path or "")
    with pytest.raises(piconv.OutputError):
        piconv.convert(result.document, "markdown", str(source))
    assert source.read_bytes() == before
