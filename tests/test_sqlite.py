"""The sqlite format: a session's rows, the archive of a directory run, its schema's
versions, and what happens to a damaged, foreign or newer database."""

from __future__ import annotations

import io
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson
import piconv
import pytest
from conftest import REPO, session_bytes
from piconv.bulk import run_bulk
from piconv.converters.html.escape import anchor as html_anchor
from piconv.converters.sqlite import ARCHIVE, check
from piconv.converters.sqlite import store as _store
from piconv.converters.sqlite.rows import anchor
from piconv.converters.sqlite.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from piconv.converters.sqlite.store import Store, connect, put
from piconv.errors import OutputError

BASIC = REPO / "examples" / "basic.jsonl"
BRANCHING = REPO / "examples" / "branching.jsonl"


def _db(data: bytes, tmp_path: Path) -> sqlite3.Connection:
    path = tmp_path / "x.db"
    path.write_bytes(data)
    return sqlite3.connect(path)


def _convert(source: object) -> bytes:
    out = io.BytesIO()
    piconv.convert(source, "sqlite", out)
    return out.getvalue()


def test_one_session_database(tmp_path: Path) -> None:
    data = _convert(str(BRANCHING))
    assert check(data) == []
    conn = _db(data, tmp_path)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    doc = piconv.load(str(BRANCHING))
    key, project, title, turns, models, n = conn.execute(
        "SELECT key, project, title, turns, models, entries FROM sessions"
    ).fetchone()
    assert (key, project, n) == ("branching.jsonl", "pisg-branching-s1", len(doc.entries))
    assert turns == sum(1 for e in doc.entries if e.message is not None and e.message.role == "user")
    assert title == doc.session_name()
    assert orjson.loads(models) == ["faux/faux-coder"]
    assert conn.execute("SELECT count(*) FROM entries").fetchone()[0] == len(doc.entries)
    # every entry of every branch, with its parent, so the tree can be rebuilt
    pairs = set(conn.execute("SELECT id, parent FROM entries"))
    assert pairs == {(e.id, e.parent_id) for e in doc.entries}
    hits = conn.execute(
        "SELECT e.id FROM entries_fts JOIN entries e ON e.pk = entries_fts.rowid WHERE entries_fts MATCH 'wrapper'"
    ).fetchall()
    assert hits and all(eid in doc for (eid,) in hits)
    # the system prompt is not indexed (it would match every search)
    assert (
        conn.execute("SELECT count(*) FROM entries WHERE role = 'system' AND text IS NOT NULL").fetchone()[0]
        == 0
    )


def test_same_input_same_bytes() -> None:
    assert _convert(str(BASIC)) == _convert(str(BASIC))


def test_the_checker_rejects_what_is_not_an_archive(tmp_path: Path) -> None:
    assert check(b"not a database") != []
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    assert "not a piconv archive" in check(other.read_bytes())[0]


@pytest.mark.parametrize("entry_id", ["3f2a9c1d", "a b", "<x>", "é-1", "a_b", "--", "x\u2028y"])
def test_anchor_is_the_html_pages_anchor(entry_id: str) -> None:
    assert anchor(entry_id) == html_anchor(entry_id)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_an_older_schema_is_migrated_keeping_its_rows(tmp_path: Path, version: int) -> None:
    path = tmp_path / "archive.db"
    conn = connect(str(path))
    conn.execute("BEGIN")
    for step in MIGRATIONS[:version]:  # 1: tables, no full-text index; 2: no prefix index; 3: prefix indexes
        step(conn)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {version}")
    conn.execute("COMMIT")
    conn.execute("INSERT INTO sessions (key, title) VALUES ('old.jsonl', 'old one')")
    conn.execute(
        "INSERT INTO entries (session, id, role, text) VALUES (1, 'e1', 'user', 'remember the kestrel')"
    )
    if version >= 2:
        conn.execute("INSERT INTO entries_fts (entries_fts) VALUES ('rebuild')")
    conn.close()
    older = subprocess.run(
        [sys.executable, "-m", "piconv", "search", "kestrel", str(path)], capture_output=True, text=True
    )
    assert older.returncode != 0 and f"an older archive (schema {version})" in older.stderr
    assert "convert into it once" in older.stderr
    store = Store(str(path))
    assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    sql = store.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'entries_fts'").fetchone()[0]
    assert "prefix=" not in sql
    assert store.conn.execute("SELECT v FROM entries_fts_config WHERE k = 'automerge'").fetchone() == (16,)
    assert store.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'entries_filters'").fetchone()
    store.close()
    for query, filters in [
        ("kestrel", {}),
        ("kes*", {}),
        ("ke*", {"role": "user"}),
        ("kestrel", {"role": "tool"}),
    ]:
        hits = ARCHIVE.search(str(path), query, filters)
        expected = [] if filters.get("role") == "tool" else [("e1", "old one")]
        assert [(h["entry"], h["title"]) for h in hits] == expected
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO entries_fts(entries_fts, rank) VALUES ('integrity-check', 1)")
    conn.close()


def test_a_failed_session_leaves_the_database_as_it_was(tmp_path: Path) -> None:
    store = ARCHIVE.open(str(tmp_path / "archive.db"))
    doc = piconv.load(str(BASIC))
    payload = ARCHIVE.payload(doc, {}, piconv.Report("sqlite"))
    store.add("a.jsonl", payload, "sha1", {})
    before = store.conn.execute("SELECT count(*) FROM entries").fetchone()[0]
    session = store.conn.execute("SELECT * FROM sessions").fetchone()
    with pytest.raises(sqlite3.Error):
        # the old rows go, then an entry row cannot be written: all of it is rolled back
        put(store.conn, ["a.jsonl", *([None] * 17)], [["x"] * 11 + [None], ["too", "short"]])
    assert store.conn.execute("SELECT count(*) FROM entries").fetchone()[0] == before
    assert store.conn.execute("SELECT * FROM sessions").fetchone() == session
    store.close()


def _tree(root: Path) -> None:
    (root / "--home-dev-alpha--").mkdir(parents=True)
    (root / "--home-dev-beta--").mkdir()
    shutil.copy(BASIC, root / "--home-dev-alpha--" / "2026-11-30T06-42-55-389Z_basic.jsonl")
    shutil.copy(BRANCHING, root / "--home-dev-beta--" / "2026-11-30T06-42-56-000Z_branching.jsonl")
    (root / "--home-dev-beta--" / "2026-11-30T07-00-00-000Z_broken.jsonl").write_bytes(b"not a session\n")


@pytest.mark.parametrize("jobs", [1, 2])  # 2: the pool's workers write the archive
def test_a_directory_run_writes_one_archive_incrementally(tmp_path: Path, jobs: int) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    _tree(src)
    summary = run_bulk(str(src), str(out), ["html", "sqlite"], jobs=jobs, quiet=True)
    assert summary.failed == 0 and [s["code"] for s in summary.skipped] == [
        "not-a-session"
    ]  # the broken file
    assert summary.archives == [str(out / "archive.db")]
    conn = sqlite3.connect(out / "archive.db")
    keys = sorted(k for (k,) in conn.execute("SELECT key FROM sessions"))
    assert keys == [
        "--home-dev-alpha--/2026-11-30T06-42-55-389Z_basic.jsonl",
        "--home-dev-beta--/2026-11-30T06-42-56-000Z_branching.jsonl",
    ]
    html = dict(conn.execute("SELECT key, html FROM sessions"))
    assert all((out / rel).is_file() for rel in html.values())
    conn.close()
    assert orjson.loads((out / "archive.metadata.json").read_bytes())["databases"]["archive"]
    # nothing changed: nothing is redone
    again = run_bulk(str(src), str(out), ["html", "sqlite"], jobs=jobs, quiet=True)
    assert again.converted == 0
    # one session changes: only its rows are replaced
    changed = src / "--home-dev-alpha--" / "2026-11-30T06-42-55-389Z_basic.jsonl"
    changed.write_bytes(
        BASIC.read_bytes()
        + session_bytes(
            {
                "type": "message",
                "id": "zz1",
                "parentId": None,
                "timestamp": "2026-12-01T00:00:00.000Z",
                "message": {"role": "user", "content": "a quokka appears", "timestamp": 5},
            },
            header={},
        )
    )
    third = run_bulk(str(src), str(out), ["html", "sqlite"], jobs=jobs, quiet=True)
    assert third.converted == 1
    hits = ARCHIVE.search(str(out), "quokka")
    assert [h["entry"] for h in hits] == ["zz1"]
    conn = sqlite3.connect(out / "archive.db")
    assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 2
    conn.close()


def test_search_links_into_the_html_page(tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    _tree(src)
    run_bulk(str(src), str(out), ["html", "sqlite"], jobs=1, quiet=True)
    hits = ARCHIVE.search(str(out / "archive.db"), "wrapper")
    assert hits
    for hit in hits:
        page, _, frag = hit["link"].partition("#")
        assert re.search(f'id="{re.escape(frag)}"', Path(page).read_text())
        assert "«" in hit["snippet"] and "»" in hit["snippet"]
    # without html beside the database there is no link
    run_bulk(str(src), str(tmp_path / "only"), ["sqlite"], jobs=1, quiet=True)
    assert all(h["link"] is None for h in ARCHIVE.search(str(tmp_path / "only"), "wrapper"))


@pytest.mark.parametrize(
    ("kind", "content"),
    [("corrupt", b"SQLite format 3\x00" + b"\xff" * 5000), ("foreign", b"a text file, not a database\n")],
)
def test_a_damaged_or_foreign_file_is_moved_aside_and_rebuilt(
    tmp_path: Path, kind: str, content: bytes
) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    _tree(src)
    run_bulk(str(src), str(out), ["html", "sqlite"], jobs=1, quiet=True)
    (out / "archive.db").write_bytes(content)
    summary = run_bulk(str(src), str(out), ["html", "sqlite"], jobs=1, quiet=True)
    assert (out / f"archive.db.{kind}").read_bytes() == content  # kept, never written over
    assert any("moved to archive.db." + kind in note for note in summary.notes)
    assert "rebuilt from the inputs" in summary.render()
    conn = sqlite3.connect(out / "archive.db")
    assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 2
    conn.close()


def test_another_programs_database_is_not_used(tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    _tree(src)
    out.mkdir()
    conn = sqlite3.connect(out / "archive.db")
    conn.execute("CREATE TABLE mine (x)")
    conn.execute("INSERT INTO mine VALUES (42)")
    conn.commit()
    conn.close()
    summary = run_bulk(str(src), str(out), ["sqlite"], jobs=1, quiet=True)
    assert any("not a piconv archive" in n for n in summary.notes)
    kept = sqlite3.connect(out / "archive.db.foreign")
    assert kept.execute("SELECT x FROM mine").fetchall() == [(42,)]
    kept.close()


def test_a_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    _tree(src)
    run_bulk(str(src), str(out), ["sqlite"], jobs=1, quiet=True)
    conn = sqlite3.connect(out / "archive.db")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = (out / "archive.db").read_bytes()
    (src / "--home-dev-alpha--" / "2026-11-30T06-42-55-389Z_basic.jsonl").touch()
    with pytest.raises(OutputError, match="newer piconv"):
        run_bulk(str(src), str(out), ["html", "sqlite"], jobs=1, quiet=True)
    assert (out / "archive.db").read_bytes() == before
    assert not list(out.rglob("*.html"))  # refused before anything was converted
    with pytest.raises(piconv.InputError, match="newer piconv"):
        ARCHIVE.search(str(out), "anything")


def test_lone_surrogates_and_huge_numbers_are_stored_not_fatal(tmp_path: Path) -> None:
    data = (
        b'{"type":"session","version":3,"id":"s\\ud800x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w/\\udcff"}\n'
        b'{"type":"message","id":"a\\ud800","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
        b'"message":{"role":"user","content":"hi \\ud800 there","timestamp":1}}\n'
        b'{"type":"message","id":"b","parentId":"a\\ud800","timestamp":"2026-01-01T00:00:02.000Z","message":'
        b'{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"x","arguments":{"k\\ud800":1e400}}],'
        b'"provider":"p","model":"m","usage":{"input":100000000000000000000000,"output":-3,"totalTokens":99999999999999999999999,'
        b'"cost":{"total":1e400}},"stopReason":"stop","timestamp":2}}\n'
    )
    out = _convert(data)
    assert check(out) == []
    conn = _db(out, tmp_path)
    rows = dict(conn.execute("SELECT id, text FROM entries"))
    assert rows["a\ufffd"] == "hi \ufffd there"
    assert rows["b"].startswith('x {"k\ufffd"')
    assert conn.execute("SELECT tokens, cost FROM sessions").fetchone() == (0, 0.0)  # no count, no infinity


def test_rows_are_cleaned_for_sqlite() -> None:
    from piconv.converters.sqlite.rows import _clean

    assert _clean(("x", 1 << 70, -(1 << 63), "a\ud800b", "é", None, 1.5)) == (
        "x",
        None,
        -(1 << 63),
        "a\ufffdb",
        "é",
        None,
        1.5,
    )


def test_a_query_ranks_the_newest_matches_its_filters_admit(tmp_path: Path, monkeypatch) -> None:
    from piconv.converters.sqlite import search as search_module

    db = tmp_path / "b.db"
    db.write_bytes(_convert(str(BRANCHING)))
    conn = sqlite3.connect(db)
    newest = [
        (eid, role)
        for (eid, role) in conn.execute(
            "SELECT e.id, e.role FROM entries_fts JOIN entries e ON e.pk = entries_fts.rowid "
            "WHERE entries_fts MATCH 'option' ORDER BY e.pk DESC"
        )
    ]
    conn.close()
    assert len(newest) > 5
    every = {h["entry"] for h in ARCHIVE.search(str(db), "option", limit=100)}
    assert every == {eid for eid, _ in newest}
    monkeypatch.setattr(search_module, "RANK_WINDOW", 2)
    assert {h["entry"] for h in ARCHIVE.search(str(db), "option", limit=100)} == {
        eid for eid, _ in newest[:2]
    }
    # the window is over the matches a filter admits, so it never loses them to newer
    # matches the filter refuses
    users = [eid for eid, role in newest if role == "user"]
    assert len(users) > 2 and set(users[:2]) - {eid for eid, _ in newest[:2]}
    found = {h["entry"] for h in ARCHIVE.search(str(db), "option", {"role": "user"}, limit=100)}
    assert found == set(users[:2])
    monkeypatch.setattr(search_module, "RANK_WINDOW", 100)
    found = {h["entry"] for h in ARCHIVE.search(str(db), "option", {"role": "user"}, limit=100)}
    assert found == set(users)


@pytest.mark.parametrize("planted", ["archive.db", "archive.db-wal", "archive.db-journal"])
def test_a_link_planted_where_the_archive_goes_is_moved_aside_not_followed(
    tmp_path: Path, planted: str
) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    _tree(src)
    run_bulk(str(src), str(out), ["sqlite"], jobs=1, quiet=True)
    outside = tmp_path / "outside.db"  # a dangling link: following it would create this file
    (out / "archive.db").unlink()  # the run's own archive gone; a link in its place or its journal's
    (out / planted).symlink_to(outside)
    summary = run_bulk(str(src), str(out), ["sqlite"], jobs=1, quiet=True, force=True)
    assert not outside.exists() and not os.path.lexists(str(outside) + "-wal")
    assert os.path.islink(out / f"{planted.replace('archive.db', 'archive.db.foreign')}")
    assert not (out / "archive.db").is_symlink()
    conn = sqlite3.connect(out / "archive.db")
    assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 2
    conn.close()
    assert any("moved to archive.db.foreign" in note for note in summary.notes)


def test_a_rebuilt_archive_links_the_html_pages_of_earlier_runs(tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    _tree(src)
    run_bulk(str(src), str(out), ["html", "sqlite"], jobs=2, quiet=True)
    (out / "archive.db").unlink()
    # every session goes into the archive again; its html page, up to date, is not redone
    summary = run_bulk(str(src), str(out), ["html", "sqlite"], jobs=2, quiet=True)
    assert summary.converted == 2
    conn = sqlite3.connect(out / "archive.db")
    pages = [html for (html,) in conn.execute("SELECT html FROM sessions")]
    conn.close()
    assert len(pages) == 2 and all((out / page).is_file() for page in pages)


def _rows_of(path: Path) -> tuple[int, int]:
    conn = sqlite3.connect(path)
    try:
        return (
            conn.execute("SELECT count(*) FROM sessions").fetchone()[0],
            conn.execute("SELECT count(*) FROM entries").fetchone()[0],
        )
    finally:
        conn.close()


def test_a_worker_waits_for_the_process_writing_before_it(tmp_path: Path) -> None:
    import threading
    import time

    path = tmp_path / "archive.db"
    store = Store(str(path))
    other = connect(str(path))
    other.execute("BEGIN IMMEDIATE")  # another worker, writing its session
    threading.Timer(0.3, other.execute, ("COMMIT",)).start()
    started = time.monotonic()
    try:
        ARCHIVE.put(str(path), "a.jsonl", piconv.load(str(BASIC)), {}, piconv.Report("sqlite"), "sha", {})
    finally:
        _store.release()
    assert time.monotonic() - started >= 0.3
    other.close()
    store.close()
    assert _rows_of(path)[0] == 1


def test_a_worker_interrupted_mid_session_lets_the_lock_go(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "archive.db"
    store = Store(str(path))

    def interrupted(conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        raise KeyboardInterrupt  # as the time limit's alarm does, between two statements

    monkeypatch.setattr(_store, "_begin", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ARCHIVE.put(str(path), "a.jsonl", piconv.load(str(BASIC)), {}, piconv.Report("sqlite"), "sha", {})
    assert str(path) not in _store._HERE  # its connection closed: the transaction rolled back
    store.conn.execute("BEGIN IMMEDIATE")  # and the write lock free at once
    store.conn.execute("ROLLBACK")
    store.close()
    assert _rows_of(path) == (0, 0)


@pytest.mark.parametrize("planted", [None, "archive.db-wal", "archive.db-shm"])
def test_a_worker_never_writes_through_a_link_nor_makes_an_archive(
    tmp_path: Path, planted: str | None
) -> None:
    path, outside = tmp_path / "archive.db", tmp_path / "outside"
    if planted is None:
        error: type[Exception] = sqlite3.OperationalError  # gone: not made again by a worker
    else:
        Store(str(path)).close()
        (tmp_path / planted).symlink_to(outside)
        error = OSError
    with pytest.raises(error):
        ARCHIVE.put(str(path), "a.jsonl", piconv.load(str(BASIC)), {}, piconv.Report("sqlite"), "sha", {})
    assert not outside.exists() and (planted is not None or not path.exists())
    assert not _store._HERE


def test_a_session_the_worker_cannot_put_in_fails_alone(tmp_path: Path, monkeypatch) -> None:
    def full(*_args: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(_store, "put_here", full)
    src, out = tmp_path / "in", tmp_path / "out"
    _tree(src)
    summary = run_bulk(str(src), str(out), ["html", "sqlite"], jobs=1, quiet=True)
    archive = [f["input"] for f in summary.failures if f["code"] == "bulk:archive-error"]
    assert len(archive) == 2 and all(
        f["format"] == "sqlite" for f in summary.failures if f["input"] in archive
    )
    assert len(list(out.rglob("*.html"))) == 3  # the pages and the index are written all the same


def test_dask_workers_send_their_rows_to_the_process_that_writes(tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    src, out = tmp_path / "in", tmp_path / "out"
    _tree(src)
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        summary = run_bulk(str(src), str(out), ["html", "sqlite"], client=client, quiet=True)
    assert (summary.converted, summary.failed, len(summary.skipped)) == (2, 0, 1)
    assert _rows_of(out / "archive.db")[0] == 2
    hits = ARCHIVE.search(str(out), "wrapper")
    assert hits and all(hit["link"] for hit in hits)


def test_the_parent_holds_no_connection_while_the_workers_write(tmp_path: Path) -> None:
    path, outside = tmp_path / "archive.db", tmp_path / "outside"
    store = ARCHIVE.open(str(path))
    store.idle()  # the run's pool may be forked from here: no open database to inherit
    assert store.store._conn is None
    assert not os.path.exists(str(path) + "-wal")  # the last connection gone, the log folded in
    assert store.keys() == {}  # opened again when needed
    store.idle()
    os.symlink(outside, str(path) + "-wal")  # planted meanwhile: never written through
    with pytest.raises(OSError, match="not written through"):
        store.close()
    assert not outside.exists()
