"""A sessions folder as it really is, built from the corpus, through every format twice.

``~/.pi/agent/sessions`` holds more than pi's sessions: an extension's log beside them, a
fork beside the session it came from, pi-subagents' runs in both of its layouts (the run's
events in the project's ``subagent-artifacts/``, a subagent's session below its parent's
stem), a file Oh-My-Pi wrote with its title line, a file without a header, an empty one, and
the archive itself. One run in every built-in format writes every session, passes over the
rest and names each; a second run converts nothing; the index, the archive and ``piconv
inspect`` link the fork and the subagents to their sessions and count every entry once; a
run into another folder never reads the first archive's outputs as sessions.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import SHARED
from piconv.bulk import run_bulk
from piconv.cli import main
from piconv.registry import build_registry

pytestmark = pytest.mark.shared

FORMATS = sorted(conv.name for conv in build_registry(third_party=False).formats())
GENERATED = SHARED / "corpus" / "pi-generated"
PARENT_ID = "01a22b31-3bc5-7732-a1df-0ff5d83b6f08"
FORK_ID = "01a22b31-3c15-7732-a1df-0ff813e3bbd6"
BRANCHING = "--home-dev-projects-pisg-branching-s1--"
BASIC = "--home-dev-projects-pisg-basic-s1--"
PARENT = f"{BRANCHING}/2026-11-30T06-42-56-581Z_{PARENT_ID}.jsonl"
FORK = f"{BRANCHING}/2026-11-30T06-42-56-661Z_{FORK_ID}.jsonl"
RUNNER = f"{BASIC}/2026-11-30T06-42-55-389Z_basic.jsonl"
ARTIFACT = f"{BASIC}/subagent-artifacts/5f316403_worker.jsonl"
STEM_CHILD = f"{BRANCHING}/2026-11-30T06-42-56-581Z_{PARENT_ID}/7c1e9a20/run-0/session.jsonl"
OMP = "-home-dev-omp-app/2026-07-02T09-48-32-328Z_omp-slot.jsonl"
SESSIONS = {
    PARENT,
    FORK,
    RUNNER,
    ARTIFACT,
    STEM_CHILD,
    OMP,
    "--home-dev-projects-pisg-compaction-s1--/c.jsonl",
}
PASSED_OVER = {
    f"{BASIC}/events.jsonl": "not-a-session",
    "--legacy--/headerless.jsonl": "not-a-session",
    "--legacy--/empty.jsonl": "empty",
}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _write(path: Path, values: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(v) + b"\n" for v in values))


def _as_child(source: Path, session_id: str, cwd: str, stamp: str) -> list[dict[str, Any]]:
    """A corpus session made another session's: its own id, working directory and start."""
    lines = _lines(source)
    lines[0] = {**lines[0], "id": session_id, "cwd": cwd, "timestamp": stamp}
    return lines


def build_tree(root: Path) -> None:
    # a fork and its parent, as pi names them; the fork's header names its parent where it
    # was on another machine, so it is found by the id in the file name
    (root / BRANCHING).mkdir(parents=True)
    (root / PARENT).write_bytes((GENERATED / "branching.jsonl").read_bytes())
    (root / FORK).write_bytes((GENERATED / "branching-fork.jsonl").read_bytes())
    # a session that ran a pi-subagents run: its tool result names the run
    runner = _lines(GENERATED / "basic.jsonl")
    last = runner[-1]["id"]
    call = {"type": "toolCall", "id": "call_sub", "name": "subagent", "arguments": {"agent": "worker"}}
    runner += [
        {
            "type": "message",
            "id": "sub00001",
            "parentId": last,
            "timestamp": "2026-11-30T06:43:10.000Z",
            "message": {"role": "assistant", "content": [call], "provider": "faux", "model": "faux-coder"},
        },
        {
            "type": "message",
            "id": "sub00002",
            "parentId": "sub00001",
            "timestamp": "2026-11-30T06:43:20.000Z",
            "message": {
                "role": "toolResult",
                "toolCallId": "call_sub",
                "toolName": "subagent",
                "content": [{"type": "text", "text": "done"}],
                "details": {"mode": "single", "runId": "5f316403", "results": []},
                "isError": False,
                "timestamp": 1,
            },
        },
    ]
    _write(root / RUNNER, runner)
    # the run's events, in pi-subagents' artifacts folder: a header, then pi's JSON events
    events = _as_child(
        GENERATED / "extensions.jsonl",
        "sub-artifact",
        "/home/dev/projects/pisg-basic-s1",
        "2026-11-30T06:43:11.000Z",
    )
    _write(root / ARTIFACT, [events[0], {"type": "agent_start"}, {"type": "turn_start"}, *events[1:]])
    # a subagent's own session, below its parent's stem (STEM/RUN/run-N/session.jsonl)
    _write(
        root / STEM_CHILD,
        _as_child(
            GENERATED / "images.jsonl",
            "sub-stem",
            "/home/dev/projects/pisg-branching-s1",
            "2026-11-30T06:42:57.000Z",
        ),
    )
    # another project; an extension's log beside a project's sessions
    (root / "--home-dev-projects-pisg-compaction-s1--").mkdir()
    (root / "--home-dev-projects-pisg-compaction-s1--" / "c.jsonl").write_bytes(
        (GENERATED / "compaction.jsonl").read_bytes()
    )
    _write(root / BASIC / "events.jsonl", [{"type": "event", "name": "tool_call", "at": 1}])
    # Oh-My-Pi: its title line before the header, in a folder named its way
    omp = _as_child(GENERATED / "models.jsonl", "omp-slot", "/home/dev/omp/app", "2026-07-02T09:48:32.328Z")
    _write(
        root / OMP,
        [{"type": "title", "v": 1, "title": "Fix the widget", "source": "auto", "pad": "   "}, *omp],
    )
    # a file that lost its header, and an empty one
    (root / "--legacy--").mkdir()
    headerless = (GENERATED / "basic.jsonl").read_bytes().split(b"\n", 1)[1]
    (root / "--legacy--" / "headerless.jsonl").write_bytes(headerless)
    (root / "--legacy--" / "empty.jsonl").write_bytes(b"")
    # deeper than pi keeps sessions: found with --recursive only
    _write(
        root / "--home-dev-projects-pisg-compaction-s1--" / "old" / "backup" / "x.jsonl",
        _lines(GENERATED / "basic.jsonl"),
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("tree") / "sessions"
    build_tree(root)
    out = root / "archive"  # the archive inside the sessions folder, as users often keep it
    first = run_bulk(str(root), str(out), FORMATS, jobs=2, quiet=True)
    second = run_bulk(str(root), str(out), FORMATS, jobs=2, quiet=True)
    return {"root": root, "out": out, "first": first, "second": second}


def test_every_session_is_converted_in_every_format_and_the_rest_passed_over(runs: dict[str, Any]) -> None:
    first, out = runs["first"], runs["out"]
    assert (first.converted, first.failed, first.refused, first.fatal) == (len(SESSIONS), 0, 0, None)
    assert {s["input"]: s["code"] for s in first.skipped} == PASSED_OVER
    manifest = [orjson.loads(line) for line in (out / ".piconv-manifest.jsonl").read_bytes().splitlines()]
    assert {rec["input"] for rec in manifest} == SESSIONS
    for rec in manifest:
        assert sorted(rec["outputs"]) == FORMATS, rec["input"]
        for output in rec["outputs"].values():
            for rel in output.get("leaves", [output["path"]]):
                assert (out / rel).is_file(), rel
    rendered = first.render()
    for rel in PASSED_OVER:
        assert rel in rendered
    assert "3 skipped, not sessions: empty: 1, not-a-session: 2" in rendered


def test_the_second_run_converts_nothing(runs: dict[str, Any]) -> None:
    second = runs["second"]
    assert (second.converted, second.up_to_date, second.failed, second.refused) == (0, len(SESSIONS), 0, 0)
    assert {s["input"]: s["code"] for s in second.skipped} == PASSED_OVER


def test_the_omp_session_has_one_root_and_its_title(runs: dict[str, Any]) -> None:
    rec = _record(runs["out"], OMP)
    assert rec["meta"]["title"] == "Fix the widget"
    ir = orjson.loads((runs["out"] / OMP.replace(".jsonl", ".ir.json")).read_bytes())
    assert [p["code"] for p in ir.get("issues", [])] == []  # no late header, no entry without id
    written = (runs["out"] / OMP.replace(".jsonl", ".pi.jsonl")).read_bytes().splitlines()
    source = (runs["root"] / OMP).read_bytes().splitlines()
    assert written[:2] == source[:2]  # the title line kept, before the header, as it was


def _record(out: Path, rel: str) -> dict[str, Any]:
    for line in (out / ".piconv-manifest.jsonl").read_bytes().splitlines():
        rec = orjson.loads(line)
        if rec["input"] == rel:
            return rec
    raise AssertionError(f"no record of {rel}")


def test_the_archive_links_forks_and_subagents_and_counts_every_token_once(runs: dict[str, Any]) -> None:
    conn = sqlite3.connect(runs["out"] / "archive.db")
    links = {
        key: (parent, relation)
        for key, parent, relation in conn.execute("SELECT key, parent, relation FROM sessions")
    }
    assert links == {
        PARENT: (None, None),
        FORK: (PARENT, "fork"),
        RUNNER: (None, None),
        ARTIFACT: (RUNNER, "subagent"),
        STEM_CHILD: (PARENT, "subagent"),
        OMP: (None, None),
        "--home-dev-projects-pisg-compaction-s1--/c.jsonl": (None, None),
    }
    # every entry counted once: the sum over sessions is the sum over distinct entries
    distinct = conn.execute(
        "SELECT sum(tokens) FROM (SELECT DISTINCT e.id, e.timestamp, e.tokens FROM entries e WHERE e.tokens IS NOT NULL)"
    ).fetchone()[0]
    assert conn.execute("SELECT sum(tokens) FROM sessions").fetchone()[0] == distinct
    fork_tokens, fork_turns = conn.execute(
        "SELECT tokens, turns FROM sessions WHERE key = ?", (FORK,)
    ).fetchone()
    assert (fork_tokens, fork_turns) == (0, 0)  # every entry of this fork is a copy of its parent's
    conn.close()


def test_the_index_nests_forks_and_subagents_under_their_session(runs: dict[str, Any]) -> None:
    md = (runs["out"] / "index.md").read_text(encoding="utf-8")
    rows = [line for line in md.splitlines() if line.startswith("| ") and "](<" in line]
    order = [next(rel for rel in SESSIONS if rel.replace(".jsonl", ".md") in row) for row in rows]
    assert order.index(FORK) == order.index(PARENT) + 1 or order.index(STEM_CHILD) == order.index(PARENT) + 1
    assert order.index(ARTIFACT) == order.index(RUNNER) + 1
    fork_row = rows[order.index(FORK)]
    assert fork_row.startswith("| ↳ [") and " — forked from " in fork_row
    assert "subagent of" in rows[order.index(ARTIFACT)] and "subagent of" in rows[order.index(STEM_CHILD)]
    html = (runs["out"] / "index.html").read_text(encoding="utf-8")
    assert html.count('<tr class="sub1">') == 3


def test_inspect_of_the_folder_totals_as_the_archive_does(
    runs: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(runs["root"]), "--json"]) == 0
    info = orjson.loads(capsys.readouterr().out)
    assert {s["input"] for s in info["sessions"]} == SESSIONS  # the archive inside is no input
    assert {s["input"]: s["code"] for s in info["skipped"]} == {**PASSED_OVER, "archive": "piconv-output"}
    conn = sqlite3.connect(runs["out"] / "archive.db")
    tokens, turns = conn.execute("SELECT sum(tokens), sum(turns) FROM sessions").fetchone()
    conn.close()
    assert (info["totals"]["tokens"], info["totals"]["turns"]) == (tokens, turns)
    fork = next(s for s in info["sessions"] if s["input"] == FORK)
    assert (fork["relation"], fork["parent"], fork["tokens"], fork["copied_entries"]) == (
        "fork",
        PARENT,
        0,
        5,
    )


def test_a_run_elsewhere_reads_nothing_the_first_wrote(runs: dict[str, Any], tmp_path: Path) -> None:
    again = run_bulk(str(runs["root"]), str(tmp_path / "elsewhere"), ["asf", "markdown"], jobs=1, quiet=True)
    assert (again.converted, again.failed) == (len(SESSIONS), 0)
    assert {s["input"]: s["code"] for s in again.skipped} == {**PASSED_OVER, "archive": "piconv-output"}


def test_recursive_walks_every_folder_but_never_an_archive(runs: dict[str, Any], tmp_path: Path) -> None:
    deep = run_bulk(str(runs["root"]), str(tmp_path / "deep"), ["ir"], jobs=1, quiet=True, recursive=True)
    assert deep.converted == len(SESSIONS) + 1  # the backup below a project folder too
    assert os.path.isfile(
        tmp_path / "deep" / "--home-dev-projects-pisg-compaction-s1--" / "old" / "backup" / "x.ir.json"
    )
