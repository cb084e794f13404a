"""The archive keeps what it holds: another program's lock is waited for, then refused,
never taken for damage; a wrong schema number and a dropped full-text index are repaired;
``piconv search`` stays linear in its query's words and takes any ``--limit``."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import piconv
import pytest
from conftest import session_bytes
from piconv.bulk import run_bulk
from piconv.cli import main
from piconv.converters.sqlite import ARCHIVE, schema, store
from test_bulk_lineage import header, turn, write


@pytest.fixture
def archive(tmp_path: Path) -> tuple[Path, Path]:
    """A sessions folder of three sessions and an archive of them, one of whose inputs
    is then deleted (the archive keeps it, as docs/formats/sqlite.md promises)."""
    src, out = tmp_path / "sessions", tmp_path / "out"
    for n in range(3):
        data = session_bytes(*turn(1, None, 10, 0.01), header=header(f"s{n}", "2026-01-01T00:00:00.000Z"))
        write(src / "--w-app--" / f"s{n}.jsonl", data)
    assert run_bulk(str(src), str(out), ["sqlite"], jobs=1, quiet=True).converted == 3
    (src / "--w-app--" / "s2.jsonl").unlink()
    return src, out


def _keys(out: Path) -> list[str]:
    conn = sqlite3.connect(out / "archive.db")
    try:
        return sorted(k for (k,) in conn.execute("SELECT key FROM sessions"))
    finally:
        conn.close()


@pytest.mark.parametrize("hold", ["BEGIN IMMEDIATE", "BEGIN; SELECT count(*) FROM sessions"])
def test_a_busy_archive_is_refused_left_whole_and_used_once_free(
    archive: tuple[Path, Path], hold: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A write lock (a second program writing) or a read left open (datasette, a query
    in a shell) on archive.db: the run waits, then stops with a clear message (exit 6),
    the archive as it was; once free, the next run uses it and keeps every session."""
    src, out = archive
    monkeypatch.setattr(store, "BUSY_WAIT_S", 0.2)
    monkeypatch.setattr(schema, "BUSY_WAIT_S", 0.2)
    other = sqlite3.connect(out / "archive.db", isolation_level=None)
    try:
        for statement in hold.split("; "):
            other.execute(statement).fetchall()
        started = time.monotonic()
        assert main([str(src), "--to", "sqlite", "-o", str(out)]) == 6
        assert time.monotonic() - started >= 0.2  # waited first
        err = capsys.readouterr().err
        assert "archive.db: in use by another program" in err and "left untouched" in err
        assert "Traceback" not in err and "internal error" not in err
    finally:
        other.close()
    assert not list(out.glob("archive.db.*"))  # never taken for damage, never moved aside
    again = run_bulk(str(src), str(out), ["sqlite"], jobs=1, quiet=True)
    assert (again.failed, again.notes) == (0, [])
    assert _keys(out) == ["--w-app--/s0.jsonl", "--w-app--/s1.jsonl", "--w-app--/s2.jsonl"]


def test_a_wrong_schema_number_is_corrected_not_fatal(archive: tuple[Path, Path]) -> None:
    src, out = archive
    conn = sqlite3.connect(out / "archive.db")
    conn.execute("PRAGMA user_version = 2")
    conn.close()
    summary = run_bulk(str(src), str(out), ["sqlite"], jobs=2, quiet=True)
    assert (summary.failed, summary.fatal) == (0, None)
    expected = f"schema number (2) did not match its tables (schema {schema.SCHEMA_VERSION}); corrected"
    assert any(expected in n for n in summary.notes)
    assert _keys(out) == ["--w-app--/s0.jsonl", "--w-app--/s1.jsonl", "--w-app--/s2.jsonl"]
    assert ARCHIVE.search(str(out), "question")


def test_a_dropped_full_text_index_is_named_by_search_and_made_again_by_a_run(
    archive: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = archive
    conn = sqlite3.connect(out / "archive.db")
    conn.execute("DROP TABLE entries_fts")
    conn.close()
    assert main(["search", "question", str(out)]) == 3
    assert "its full-text index is missing: a directory run into it repairs it" in capsys.readouterr().err
    summary = run_bulk(str(src), str(out), ["sqlite"], jobs=1, quiet=True)
    assert summary.failed == 0 and any("full-text index was missing" in n for n in summary.notes)
    assert len(ARCHIVE.search(str(out), "question")) == 3  # the deleted input's session too


def test_tables_of_no_schema_are_refused_and_left_untouched(
    archive: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = archive
    conn = sqlite3.connect(out / "archive.db")
    conn.execute("ALTER TABLE sessions ADD COLUMN mine TEXT")
    conn.close()
    before = (out / "archive.db").read_bytes()
    assert main([str(src), "--to", "sqlite", "-o", str(out)]) == 6
    assert "its tables are not those of any piconv archive schema: left untouched" in capsys.readouterr().err
    assert (out / "archive.db").read_bytes() == before


def test_search_is_linear_in_the_query_and_takes_any_limit(
    archive: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _src, out = archive

    def seconds(words: int) -> float:
        query = " OR ".join(["question", *(f"w{n}x" for n in range(words))])
        started = time.perf_counter()
        hits = ARCHIVE.search(str(out), query)
        assert len(hits) == 3 and all("«question»" in h["snippet"] for h in hits)
        return time.perf_counter() - started

    seconds(50)  # warm
    small, large = min(seconds(400) for _ in range(3)), min(seconds(3200) for _ in range(3))
    assert large < 30 * small + 0.05  # 8 times the words: far below the 64 times a square would take
    assert main(["search", "question", str(out), "--limit", str(10**30), "--json"]) == 0
    assert '"hits"' in capsys.readouterr().out


def test_the_highlight_marks_words_and_prefixes_as_fts5_matches_them() -> None:
    from piconv.converters.sqlite.search import highlight, query_terms

    terms = query_terms('"Crème brûlée" sess* AND NOT other')
    text = "We ordered crème brulee after the session ended; sessions end."
    assert highlight(text, terms, width=64) == (
        "We ordered «crème» «brulee» after the «session» ended; «sessions» end."
    )
    assert piconv.converters.sqlite.search.MAX_LIMIT >= 20
