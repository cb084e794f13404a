"""Which files a directory run reads, as pi lists sessions; which it selects; where it looks
with no input; and the names it makes under ``--redact``."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from conftest import session_bytes
from piconv.bulk import run_bulk
from piconv.bulk.select import Selection, pi_sessions_dir
from piconv.cli import main
from test_bulk_lineage import header, turn, write


def session(session_id: str, stamp: str = "2026-01-01T00:00:00.000Z", cwd: str = "/w/app") -> bytes:
    return session_bytes(*turn(1, None, 10, 0.01), header={**header(session_id, stamp), "cwd": cwd})


def test_an_extensions_log_beside_the_sessions_is_passed_over_and_the_run_succeeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "sessions"
    write(src / "--w-app--" / "a.jsonl", session("a"))
    write(src / "--w-app--" / "events.jsonl", b'{"type":"event","name":"x"}\n' * 3)
    assert main([str(src), "--to", "html", "-o", str(tmp_path / "out"), "--jobs", "1"]) == 0
    err = capsys.readouterr().err
    assert "1 converted" in err and "0 failed" in err
    assert '--w-app--/events.jsonl: its first line is {"type": "event", …}, not a session header' in err


def test_piconvs_own_outputs_are_never_read_as_sessions(tmp_path: Path) -> None:
    """The issue's two runs: Markdown into a folder inside the sessions, then ASF into
    another; each later run into a third folder converts the same sessions, no more."""
    src = tmp_path / "sessions"
    for n in range(3):
        write(src / "--w-app--" / f"s{n}.jsonl", session(f"s{n}"))
    assert run_bulk(str(src), str(src / "out"), ["markdown"], jobs=1, quiet=True).converted == 3
    assert run_bulk(str(src), str(src / "asfout"), ["asf"], jobs=1, quiet=True).converted == 3
    later = run_bulk(str(src), str(tmp_path / "elsewhere"), ["ir"], jobs=1, quiet=True)
    assert (later.converted, later.failed, later.refused) == (3, 0, 0)
    assert {s["input"]: s["code"] for s in later.skipped} == {
        "out": "piconv-output",
        "asfout": "piconv-output",
    }


def test_only_where_pi_keeps_sessions_unless_recursive(tmp_path: Path) -> None:
    src = tmp_path / "sessions"
    write(src / "top.jsonl", session("top"))  # a session directory of pi's settings keeps them here
    write(src / "--w-app--" / "a.jsonl", session("a"))
    write(src / "--w-app--" / "notes" / "old" / "b.jsonl", session("b"))
    pi_way = run_bulk(str(src), str(tmp_path / "o1"), ["ir"], jobs=1, quiet=True)
    assert pi_way.converted == 2 and not (tmp_path / "o1" / "--w-app--" / "notes").exists()
    every = run_bulk(str(src), str(tmp_path / "o2"), ["ir"], jobs=1, quiet=True, recursive=True)
    assert every.converted == 3 and (tmp_path / "o2" / "--w-app--" / "notes" / "old" / "b.ir.json").is_file()


def test_selection_decides_from_the_header_on_a_first_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder not laid out like pi's (no project folders, no pi file names): the
    header's working directory and time decide, and the summary says which option left
    out how many."""
    src = tmp_path / "flat"
    old_file = write(src / "old.jsonl", session("old", "2025-06-01T10:00:00.000Z", "/w/legacy"))
    os.utime(old_file, (1748772000, 1748772000))  # last written 2025-06-01
    write(src / "new.jsonl", session("new", "2026-03-01T10:00:00.000Z", "/w/app"))
    every = run_bulk(
        str(src), str(tmp_path / "a"), ["ir"], jobs=1, quiet=True, selection=Selection(project="*")
    )
    assert (every.converted, every.selected_out) == (2, 0)
    old = run_bulk(
        str(src), str(tmp_path / "b"), ["ir"], jobs=1, quiet=True, selection=Selection(until="2025-12-31")
    )
    assert (old.converted, dict(old.not_selected)) == (1, {"--until": 1})
    app = run_bulk(
        str(src), str(tmp_path / "c"), ["ir"], jobs=1, quiet=True, selection=Selection(project="app")
    )
    assert (app.converted, dict(app.not_selected)) == (1, {"--project": 1})
    assert (
        main([str(src), "--to", "ir", "-o", str(tmp_path / "d"), "--project", "/w/*", "--since", "2026"]) == 0
    )
    assert "1 sessions not selected (--since: 1)" in capsys.readouterr().err


def test_pis_session_directory_as_pi_finds_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"HOME": str(home)}
    assert pi_sessions_dir(env, omp=False) == str(home / ".pi" / "agent" / "sessions")
    settings = home / ".pi" / "agent" / "settings.json"
    write(settings, json.dumps({"sessionDir": "~/kept/sessions"}).encode())
    assert pi_sessions_dir(env, omp=False) == str(home / "kept" / "sessions")
    agent = tmp_path / "agent"
    assert pi_sessions_dir({**env, "PI_CODING_AGENT_DIR": str(agent)}, omp=False) == str(agent / "sessions")
    write(agent / "settings.json", json.dumps({"sessionDir": "/s/from/settings"}).encode())
    assert pi_sessions_dir({**env, "PI_CODING_AGENT_DIR": str(agent)}, omp=False) == "/s/from/settings"
    assert pi_sessions_dir({**env, "PI_CODING_AGENT_SESSION_DIR": "/s/env"}, omp=False) == "/s/env"
    # a project's own settings, where pi is started, are laid over pi's
    project = tmp_path / "project"
    write(project / ".pi" / "settings.json", json.dumps({"sessionDir": "~/project-sessions"}).encode())
    here = {**env, "PI_CODING_AGENT_DIR": str(agent)}
    assert pi_sessions_dir(here, omp=False, cwd=str(project)) == str(home / "project-sessions")
    assert pi_sessions_dir(here, omp=False, cwd=str(tmp_path)) == "/s/from/settings"
    assert (
        pi_sessions_dir({**here, "PI_CODING_AGENT_SESSION_DIR": "/s/env"}, omp=False, cwd=str(project))
        == "/s/env"
    )
    write(project / ".pi" / "settings.json", json.dumps({"theme": "dark"}).encode())
    assert pi_sessions_dir(here, omp=False, cwd=str(project)) == "/s/from/settings"
    write(agent / "settings.json", b"{ not json")  # pi reports it; piconv goes on without it
    assert pi_sessions_dir({**env, "PI_CODING_AGENT_DIR": str(agent)}, omp=False) == str(agent / "sessions")
    # Oh-My-Pi's, asked for, or found when pi's is not there
    assert pi_sessions_dir(env, omp=True) == str(home / ".omp" / "agent" / "sessions")
    assert pi_sessions_dir({"HOME": str(tmp_path / "nobody")}) == str(
        tmp_path / "nobody" / ".pi" / "agent" / "sessions"
    )
    (tmp_path / "omp-only" / ".omp" / "agent" / "sessions").mkdir(parents=True)
    found = pi_sessions_dir({"HOME": str(tmp_path / "omp-only")})
    assert found == str(tmp_path / "omp-only" / ".omp" / "agent" / "sessions")


def test_with_no_input_omp_reads_oh_my_pis_sessions_and_their_title_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    for name in (
        "PI_CODING_AGENT_DIR",
        "PI_CODING_AGENT_SESSION_DIR",
        "OMP_CODING_AGENT_DIR",
        "OMP_CODING_AGENT_SESSION_DIR",
    ):
        monkeypatch.delenv(name, raising=False)
    title = b'{"type":"title","v":1,"title":"Fix the widget","source":"auto","pad":"   "}\n'
    write(home / ".omp" / "agent" / "sessions" / "-w-app" / "a.jsonl", title + session("a"))
    write(home / ".pi" / "agent" / "sessions" / "--w-app--" / "b.jsonl", session("b"))
    out = tmp_path / "out"
    assert main(["--to", "markdown", "-o", str(out), "--omp", "-q"]) == 0
    assert "Fix the widget" in (out / "index.md").read_text()
    assert not (out / "--w-app--").exists()  # pi's own folder was not read
    assert main(["--to", "markdown", "-o", str(tmp_path / "pi"), "-q"]) == 0  # pi's, when it exists
    assert (tmp_path / "pi" / "--w-app--" / "b.md").is_file()


def test_redaction_reaches_the_names_piconv_makes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pi names a session folder after the working directory (``--Users-alicia-app--``):
    with ``--redact`` neither the outputs' folders, the archive's key, the index, nor the
    text where the folder's name appears keep the user name."""
    monkeypatch.setenv("HOME", "/Users/alicia")
    src, out = tmp_path / "sessions", tmp_path / "out"
    folder = "--Users-alicia-app--"
    line = {
        "type": "message",
        "id": "u9",
        "parentId": "a1",
        "timestamp": "2026-01-01T00:09:00.000Z",
        "message": {"role": "user", "content": f"see ~/.pi/agent/sessions/{folder}/x.jsonl", "timestamp": 1},
    }
    data = session_bytes(
        *turn(1, None, 10, 0.01),
        line,
        header={**header("s", "2026-01-01T00:00:00.000Z"), "cwd": "/Users/alicia/app"},
    )
    write(src / folder / "s.jsonl", data)
    summary = run_bulk(
        str(src),
        str(out),
        ["markdown", "html", "sqlite"],
        jobs=1,
        quiet=True,
        filters=[("redact", {"options": _options()})],
    )
    assert summary.failed == 0, summary.failures
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert "--~-app--/s.md" in written and not any("alicia" in name for name in written)
    for name in ("index.md", "index.html", "--~-app--/s.md", "--~-app--/s.html"):
        text = (out / name).read_text(encoding="utf-8")
        assert "alicia" not in text, name
    assert "sessions/--~-app--/x.jsonl" in (out / "--~-app--/s.md").read_text(encoding="utf-8")
    conn = sqlite3.connect(out / "archive.db")
    assert conn.execute("SELECT key, html FROM sessions").fetchall() == [
        ("--~-app--/s.jsonl", "--~-app--/s.html")
    ]
    conn.close()


def _options() -> object:
    from piconv.redaction.api import RedactOptions

    return RedactOptions()


def test_pis_session_directory_from_a_working_directory_that_is_gone(tmp_path: Path) -> None:
    import os

    gone = tmp_path / "gone"
    gone.mkdir()
    home = tmp_path / "home"
    here = os.getcwd()
    os.chdir(gone)
    try:
        gone.rmdir()
        assert pi_sessions_dir({"HOME": str(home)}, omp=False) == str(home / ".pi" / "agent" / "sessions")
    finally:
        os.chdir(here)
