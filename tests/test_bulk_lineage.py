"""Forks and subagents: linked to the session they came from, every token and dollar counted once.

pi's ``/fork`` copies its parent's entries (ids and time stamps kept) into a new file whose
header names the parent (``parentSession``). Totals over an archive count those copies
once, under the parent: in the index, in the archive database and in ``piconv inspect``
of a directory. Sessions that are not linked are never compared, so two that share an
entry id both count it.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import SHARED, session_bytes
from piconv.bulk import run_bulk
from piconv.bulk.lineage import FORK, SUBAGENT, Link, resolve
from piconv.cli import main


def turn(
    n: int, parent: str | None, tokens: int, cost: float, day: str = "2026-01-01"
) -> list[dict[str, Any]]:
    """A user message and its answer, ids ``u{n}`` and ``a{n}``."""
    usage = {"input": tokens, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens}
    usage["cost"] = {"input": cost, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}
    return [
        {
            "type": "message",
            "id": f"u{n}",
            "parentId": parent,
            "timestamp": f"{day}T00:0{n}:00.000Z",
            "message": {"role": "user", "content": f"question {n}", "timestamp": 1},
        },
        {
            "type": "message",
            "id": f"a{n}",
            "parentId": f"u{n}",
            "timestamp": f"{day}T00:0{n}:30.000Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": f"answer {n}"}],
                "provider": "faux",
                "model": "faux-coder",
                "usage": usage,
                "stopReason": "stop",
                "timestamp": 2,
            },
        },
    ]


def header(session_id: str, stamp: str, **extra: str) -> dict[str, Any]:
    return {"type": "session", "version": 3, "id": session_id, "timestamp": stamp, "cwd": "/w/app", **extra}


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def fork_pair(root: Path) -> tuple[str, str]:
    """A parent of two turns (100 + 10 tokens, $1 + $0.1) and a fork that copied its first
    turn and added one of its own (1000 tokens, $10): 1,110 tokens and $11.10 in all."""
    parent_name = "2026-01-01T00-00-00-000Z_p-1.jsonl"
    parent = [*turn(1, None, 100, 1.0), *turn(2, "a1", 10, 0.1)]
    write(
        root / "--w-app--" / parent_name,
        session_bytes(*parent, header=header("p-1", "2026-01-01T00:00:00.000Z")),
    )
    forked = header("f-1", "2026-01-02T00:00:00.000Z", parentSession=f"/elsewhere/--w-app--/{parent_name}")
    fork = [*turn(1, None, 100, 1.0), *turn(3, "a1", 1000, 10.0, day="2026-01-02")]
    write(root / "--w-app--" / "2026-01-02T00-00-00-000Z_f-1.jsonl", session_bytes(*fork, header=forked))
    return f"--w-app--/{parent_name}", "--w-app--/2026-01-02T00-00-00-000Z_f-1.jsonl"


def test_a_fork_counts_only_what_it_added_in_index_archive_and_inspect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = tmp_path / "sessions", tmp_path / "out"
    parent, fork = fork_pair(src)
    summary = run_bulk(str(src), str(out), ["html", "markdown", "sqlite"], jobs=1, quiet=True)
    assert (summary.converted, summary.failed) == (2, 0)
    md = (out / "index.md").read_text()
    assert "2 sessions, 3 turns, 1,110 tokens, $11.10" in md  # not 1,210 tokens and $12.10
    assert "forked from question 1; 2 copied entries counted there" in md
    conn = sqlite3.connect(out / "archive.db")
    assert conn.execute("SELECT sum(tokens), round(sum(cost), 6), sum(turns) FROM sessions").fetchone() == (
        1110,
        11.1,
        3,
    )
    assert conn.execute(
        "SELECT parent, relation, tokens FROM sessions WHERE key = ?", (fork,)
    ).fetchone() == (
        parent,
        "fork",
        1000,
    )
    inherited = conn.execute(
        "SELECT e.id FROM entries e JOIN sessions s ON s.pk = e.session WHERE s.key = ? AND e.inherited ORDER BY e.pk",
        (fork,),
    ).fetchall()
    assert inherited == [("u1",), ("a1",)]
    conn.close()
    # the copied text is found once, under the parent
    hits = [h["session"] for h in run_search(out, "question")]
    assert sorted(hits) == sorted([parent, parent, fork])
    assert main(["inspect", str(src), "--json"]) == 0
    totals = orjson.loads(capsys.readouterr().out)["totals"]
    assert (totals["tokens"], totals["cost"], totals["turns"], totals["copied_entries"]) == (1110, 11.1, 3, 2)


def run_search(out: Path, query: str) -> list[dict[str, Any]]:
    from piconv.converters.sqlite import ARCHIVE

    return ARCHIVE.search(str(out), query)


def test_without_its_parent_a_fork_counts_everything_and_says_so(tmp_path: Path) -> None:
    src, out = tmp_path / "sessions", tmp_path / "out"
    parent, _fork = fork_pair(src)
    (src / parent).unlink()
    run_bulk(str(src), str(out), ["markdown", "sqlite"], jobs=1, quiet=True)
    assert "1 session, 2 turns, 1,100 tokens, $11.00" in (out / "index.md").read_text()
    assert "forked from a session not in the archive" in (out / "index.md").read_text()
    conn = sqlite3.connect(out / "archive.db")
    assert conn.execute("SELECT parent, relation, tokens FROM sessions").fetchone() == (None, "fork", 1100)
    conn.close()


def test_a_parent_arriving_later_links_the_fork_it_missed(tmp_path: Path) -> None:
    src, out = tmp_path / "sessions", tmp_path / "out"
    parent, _fork = fork_pair(src)
    kept = (src / parent).read_bytes()
    (src / parent).unlink()
    run_bulk(str(src), str(out), ["sqlite"], jobs=1, quiet=True)
    (src / parent).write_bytes(kept)
    again = run_bulk(str(src), str(out), ["sqlite"], jobs=1, quiet=True)
    assert (again.converted, again.up_to_date) == (1, 1)  # the fork is not converted again
    conn = sqlite3.connect(out / "archive.db")
    assert conn.execute("SELECT sum(tokens), sum(turns) FROM sessions").fetchone() == (1110, 3)
    conn.close()


def test_unrelated_sessions_sharing_an_entry_id_are_both_counted(tmp_path: Path) -> None:
    src, out = tmp_path / "sessions", tmp_path / "out"
    for name in ("one", "two"):  # the same ids and times, in two sessions neither forked from the other
        write(
            src / "--w--" / f"{name}.jsonl",
            session_bytes(*turn(1, None, 100, 1.0), header=header(name, "2026-01-01T00:00:00.000Z")),
        )
    run_bulk(str(src), str(out), ["markdown", "sqlite"], jobs=1, quiet=True)
    assert "2 sessions, 2 turns, 200 tokens, $2.00" in (out / "index.md").read_text()
    conn = sqlite3.connect(out / "archive.db")
    assert conn.execute("SELECT sum(tokens) FROM sessions").fetchone() == (200,)
    assert conn.execute("SELECT sum(inherited), count(*) FROM entries").fetchone() == (0, 4)
    conn.close()


def test_links_are_resolved_by_path_by_id_in_the_file_name_and_by_layout() -> None:
    def rec(**header: str) -> dict[str, Any]:
        return {"header": header, "meta": {}}

    records = {
        "p/2026-01-01T00-00-00-000Z_aaa.jsonl": rec(id="aaa"),
        "p/fork-by-path.jsonl": rec(parent_session="/root/in/p/2026-01-01T00-00-00-000Z_aaa.jsonl"),
        "p/fork-by-id.jsonl": rec(parent_session="/far/away/2026-01-01T00-00-00-000Z_aaa.jsonl"),
        "p/orphan.jsonl": rec(parent_session="/far/away/gone.jsonl"),
        "p/2026-01-01T00-00-00-000Z_aaa/run1/run-0/session.jsonl": rec(id="child"),
        "p/subagent-artifacts/r9_worker.jsonl": rec(id="events"),
        "p/runner.jsonl": {"header": {}, "meta": {"subagent_runs": ["r9"]}},
        "q/loop-a.jsonl": rec(parent_session="/root/in/q/loop-b.jsonl"),
        "q/loop-b.jsonl": rec(parent_session="/root/in/q/loop-a.jsonl"),
    }
    links = resolve(records, "/root/in")
    parent = "p/2026-01-01T00-00-00-000Z_aaa.jsonl"
    assert links["p/fork-by-path.jsonl"] == Link(parent, FORK)
    assert links["p/fork-by-id.jsonl"] == Link(parent, FORK)
    assert links["p/orphan.jsonl"] == Link(None, FORK)
    assert links["p/2026-01-01T00-00-00-000Z_aaa/run1/run-0/session.jsonl"] == Link(parent, SUBAGENT)
    assert links["p/subagent-artifacts/r9_worker.jsonl"] == Link("p/runner.jsonl", SUBAGENT)
    assert parent not in links and "p/runner.jsonl" not in links
    # a cycle is cut: one of the two keeps its link, the other none
    assert sorted(link.parent is None for rel, link in links.items() if rel.startswith("q/")) == [False, True]


@pytest.mark.shared
def test_the_corpus_fork_pair_counts_22283_tokens_not_28530(tmp_path: Path) -> None:
    src, out = tmp_path / "sessions", tmp_path / "out"
    generated = SHARED / "corpus" / "pi-generated"
    (src / "--p--").mkdir(parents=True)
    for name in ("branching.jsonl", "branching-fork.jsonl"):
        shutil.copyfile(generated / name, src / "--p--" / name)
    run_bulk(str(src), str(out), ["markdown", "sqlite"], jobs=1, quiet=True)
    assert "2 sessions, 6 turns, 22,283 tokens" in (out / "index.md").read_text()
    conn = sqlite3.connect(out / "archive.db")
    assert conn.execute("SELECT sum(tokens) FROM sessions").fetchone() == (22283,)
    conn.close()
