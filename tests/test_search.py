"""``piconv search`` over a directory run's archive, its filters, and choosing the
sessions of a directory run (``--since``, ``--until``, ``--project``, pi's own folder)."""

from __future__ import annotations

import fnmatch
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from conftest import REPO
from piconv.bulk import run_bulk
from piconv.bulk.select import Selection, in_range, parse_date, pi_sessions_dir
from piconv.converters.sqlite.search import MARK
from piconv.errors import UsageError

BASIC = REPO / "examples" / "basic.jsonl"
BRANCHING = REPO / "examples" / "branching.jsonl"


def piconv(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "piconv", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def _tree(root: Path) -> Path:
    (root / "--home-dev-alpha--").mkdir(parents=True)
    (root / "--home-dev-beta--").mkdir()
    shutil.copy(BASIC, root / "--home-dev-alpha--" / "2026-11-30T06-42-55-389Z_basic.jsonl")
    old = root / "--home-dev-beta--" / "2025-06-01T10-00-00-000Z_branching.jsonl"
    header, rest = BRANCHING.read_bytes().split(b"\n", 1)
    begun = orjson.loads(header)
    begun["timestamp"] = "2025-06-01T10:00:00.000Z"  # begun 2025-06-01, as its header says
    old.write_bytes(orjson.dumps(begun) + b"\n" + rest)
    os.utime(old, (1748772000, 1748772000))  # last written 2025-06-01
    return root


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("search")
    out = root / "out"
    summary = run_bulk(str(_tree(root / "in")), str(out), ["html", "sqlite"], jobs=1, quiet=True)
    assert summary.failed == 0
    return out


def _json(*args: str) -> list[dict]:
    result = piconv("search", *args, "--json")
    hits = orjson.loads(result.stdout)["hits"]
    assert result.returncode == (0 if hits else 1), result.stderr  # no match: exit 1, as grep
    return hits


def test_hits_are_ranked_with_title_date_entry_snippet_and_link(archive: Path) -> None:
    result = piconv("search", "wrapper", str(archive))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(
        "1. tally: an --average flag (wrapper approach)  [pisg-branching-s1]  2026-11-30 "
    )
    assert lines[1].startswith("   entry ") and ".html#e-" in lines[1]
    assert "«wrapper»" in lines[2].lower() or "«Wrapper»" in lines[2]
    hits = _json("wrapper", str(archive))
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert {"title", "session_created", "entry", "snippet", "link", "role", "timestamp"} <= set(hits[0])
    # each hit names its session file and the command that resumes it in pi
    assert hits[0]["path"].endswith(".jsonl") and Path(hits[0]["path"]).is_file()
    assert hits[0]["resume"] == f"pi --session {hits[0]['path']}"
    assert lines[3] == f"   resume: pi --session {hits[0]['path']}"


def test_filters(archive: Path) -> None:
    everything = _json("option OR sum", str(archive))
    assert {h["project"] for h in everything} == {"pisg-basic-s1", "pisg-branching-s1"}
    only = _json("option OR sum", str(archive), "--project", "*basic*")
    assert only and {h["project"] for h in only} == {"pisg-basic-s1"}
    by_cwd = _json("option OR sum", str(archive), "--project", "/home/dev/projects/pisg-branching*")
    assert by_cwd and {h["project"] for h in by_cwd} == {"pisg-branching-s1"}
    users = _json("option OR sum", str(archive), "--role", "user")
    assert users and {h["role"] for h in users} == {"user"}
    assert _json("option OR sum", str(archive), "--model", "faux-coder")
    assert _json("option OR sum", str(archive), "--model", "gpt") == []
    assert _json("option OR sum", str(archive), "--since", "2026-12") == []
    day = _json("option OR sum", str(archive), "--since", "2026-11-30", "--until", "2026-11-30")
    assert day and all(h["timestamp"].startswith("2026-11-30") for h in day)
    assert _json("option OR sum", str(archive), "--until", "2026-11-29") == []


def test_a_bad_query_is_a_usage_error_and_no_match_says_so(archive: Path) -> None:
    bad = piconv("search", 'unbalanced "quote', str(archive))
    assert bad.returncode == 2 and "cannot search for" in bad.stderr and "Traceback" not in bad.stderr
    none = piconv("search", "zyzzyva", str(archive))
    assert none.returncode == 1 and none.stdout == "" and "no matches for zyzzyva" in none.stderr


def test_the_archive_defaults_to_the_current_directory(archive: Path) -> None:
    result = piconv("search", "wrapper", "-n", "1", cwd=archive)
    assert result.returncode == 0 and result.stdout.startswith("1. ")


def test_dates_and_ranges() -> None:
    assert parse_date("2026-01", "--since") == "2026-01"
    assert parse_date("2026-01-05 10:00Z", "--since") == "2026-01-05T10:00"
    with pytest.raises(UsageError):
        parse_date("2026-13-01", "--until")
    assert in_range("2026-01-05T00:00Z", "2026-02-01T00:00Z", "2026-01-20", None)  # active then
    assert not in_range("2026-01-05T00:00Z", "2026-01-06T00:00Z", "2026-01-20", None)
    assert in_range("2026-01-31T23:59Z", "2026-02-02T00:00Z", None, "2026-01")  # until is inclusive
    assert not in_range("2026-02-01T00:00Z", "2026-02-02T00:00Z", None, "2026-01")


def test_since_until_and_project_choose_sessions(tmp_path: Path) -> None:
    src = _tree(tmp_path / "in")
    recent = run_bulk(
        str(src), str(tmp_path / "a"), ["sqlite"], jobs=1, quiet=True, selection=_sel(since="2026")
    )
    assert (recent.converted, recent.selected_out) == (1, 1)
    old = run_bulk(
        str(src), str(tmp_path / "b"), ["sqlite"], jobs=1, quiet=True, selection=_sel(until="2025-12")
    )
    assert (old.converted, old.selected_out) == (1, 1)
    beta = run_bulk(
        str(src), str(tmp_path / "c"), ["sqlite"], jobs=1, quiet=True, selection=_sel(project="*beta*")
    )
    assert (beta.converted, beta.selected_out) == (1, 1)
    assert [h["project"] for h in _json("option", str(tmp_path / "c"))][:1] == ["pisg-branching-s1"]


def _sel(**kw: str) -> Selection:
    return Selection(**kw)


def test_pis_session_directory_as_pi_finds_it(tmp_path: Path) -> None:
    home = os.path.expanduser("~")
    assert pi_sessions_dir({}) == os.path.join(home, ".pi", "agent", "sessions")
    assert pi_sessions_dir({"PI_CODING_AGENT_DIR": "/x/agent"}) == "/x/agent/sessions"
    assert pi_sessions_dir({"PI_CODING_AGENT_DIR": "/x", "PI_CODING_AGENT_SESSION_DIR": "/s"}) == "/s"
    # no input named: the run reads pi's session directory
    agent = tmp_path / "agent"
    _tree(agent / "sessions")
    result = piconv("--to", "sqlite", "-o", str(tmp_path / "out"), env={"PI_CODING_AGENT_DIR": str(agent)})
    assert result.returncode == 0, result.stderr
    assert "2 converted" in result.stderr
    missing = piconv(
        "--to", "sqlite", "-o", str(tmp_path / "o2"), env={"PI_CODING_AGENT_DIR": str(tmp_path / "none")}
    )
    assert missing.returncode == 2 and "pi's session directory" in missing.stderr


def _brute_force(db: Path, query: str, filters: dict[str, str], window: int, limit: int) -> list[tuple]:
    """Every match scored by FTS5's BM25, filtered here in Python, the newest ``window``
    of those admitted ranked: best score first, equal scores in the order they were written."""
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT e.pk, s.key, e.id, bm25(entries_fts), e.role, e.timestamp, s.project, s.cwd, s.models "
        "FROM entries_fts JOIN entries e ON e.pk = entries_fts.rowid JOIN sessions s ON s.pk = e.session "
        "WHERE entries_fts MATCH ?",
        [query],
    ).fetchall()
    conn.close()

    def admitted(row: tuple) -> bool:
        _, _, _, _, role, stamp, project, cwd, models = row
        glob = filters.get("project")
        return (
            (not glob or fnmatch.fnmatchcase(project or "", glob) or fnmatch.fnmatchcase(cwd or "", glob))
            and (not filters.get("role") or role == filters["role"])
            and (not filters.get("model") or filters["model"] in (models or ""))
            and (not filters.get("since") or (stamp is not None and stamp >= filters["since"]))
            and (not filters.get("until") or (stamp is not None and stamp <= filters["until"] + "\uffff"))
        )

    kept = sorted((r for r in rows if admitted(r)), key=lambda r: -r[0])[:window]
    ranked = sorted(kept, key=lambda r: (r[3], r[0]))[:limit]
    return [(key, eid, round(-score, 6)) for _, key, eid, score, *_ in ranked]


QUERIES = [
    "option OR sum",
    "wrapper",
    "opt*",
    "av* OR fl*",
    '"average flag"',
    "NEAR(option wrapper, 10)",
    "a* NOT sum",
]
FILTERS = [
    {},
    {"role": "user"},
    {"role": "assistant", "project": "*basic*"},
    {"project": "/home/dev/projects/pisg-branching*"},
    {"model": "faux"},
    {"since": "2026-11-30", "until": "2026-11-30"},
    {"until": "2025-12"},
]


@pytest.mark.parametrize("window", [100_000, 4])
@pytest.mark.parametrize("query", QUERIES)
def test_hits_are_a_brute_force_ranking(archive: Path, monkeypatch, query: str, window: int) -> None:
    from piconv.converters.sqlite import ARCHIVE
    from piconv.converters.sqlite import search as search_module

    monkeypatch.setattr(search_module, "RANK_WINDOW", window)
    db = archive / "archive.db"
    found = 0
    for filters in FILTERS:
        for limit in (3, 20):
            hits = ARCHIVE.search(str(db), query, filters, limit)
            assert [(h["session"], h["entry"], h["score"]) for h in hits] == _brute_force(
                db, query, filters, window, limit
            ), (filters, limit)
            assert all(MARK in h["snippet"] for h in hits)
            found += len(hits)
    assert found
