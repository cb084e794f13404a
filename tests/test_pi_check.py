"""The ``pi`` format's checks: while writing, every line is one JSON object within the
reader's line limit and the header line is a session header; ``piconv validate --format
pi`` reads the file as piconv reads a session and reports every line it could not read."""

from __future__ import annotations

import io
from pathlib import Path

import piconv
import piconv.jsonl
import piconv.pi.write
import pytest
from conftest import REPO, corpus_files, session_bytes
from piconv.pi.write import check_pi, line_problem

SOURCES = corpus_files() + sorted((REPO / "tests" / "data" / "hostile").glob("*.jsonl"))


@pytest.mark.shared
@pytest.mark.parametrize("path", SOURCES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_session_written_back_passes_both_checks(path: Path) -> None:
    for options in ({}, {"migrate": True}):
        out = io.BytesIO()
        piconv.convert(str(path), "pi", out, options)  # validated while writing
        lines = out.getvalue().splitlines()
        assert check_pi(out.getvalue()) == []
        assert lines


def test_line_problems() -> None:
    assert line_problem({"type": "session"}, b'{"type":"session"}', header=True) is None
    assert line_problem({"type": "message"}, b'{"type":"message"}', header=False) is None
    assert "[not-a-header]" in (line_problem({"type": "message"}, b"{}", header=True) or "")
    assert "[not-object]" in (line_problem([1], b"[1]", header=False) or "")


def test_a_line_over_the_reader_s_limit_fails_the_conversion(monkeypatch: pytest.MonkeyPatch) -> None:
    data = session_bytes(
        {"type": "message", "id": "a", "parentId": None, "message": {"role": "user", "content": "x" * 200}}
    )
    piconv.convert(data, "pi", io.BytesIO())
    monkeypatch.setattr(piconv.jsonl, "MAX_LINE_BYTES", 150)
    with pytest.raises(piconv.ValidationFailed, match=r"line 2: \[line-too-long\]"):
        piconv.convert(piconv.load(data), "pi", io.BytesIO())
    out = io.BytesIO()
    piconv.convert(piconv.load(data), "pi", out, validate=False)
    assert len(out.getvalue().splitlines()) == 2


def test_a_header_that_is_not_one_fails_the_conversion(monkeypatch: pytest.MonkeyPatch) -> None:
    data = session_bytes(
        {"type": "message", "id": "a", "parentId": None, "message": {"role": "user", "content": "hi"}}
    )
    monkeypatch.setattr(piconv.pi.write, "dump_header", lambda info: {"type": "message"})
    with pytest.raises(piconv.ValidationFailed, match=r"line 1: \[not-a-header\]"):
        piconv.convert(data, "pi", io.BytesIO())


def test_validate_reports_every_unreadable_line() -> None:
    data = session_bytes(
        {"type": "message", "id": "a", "parentId": None, "message": {"role": "user", "content": "hi"}},
        b"not json",
        b"[1]",
    )
    errors = check_pi(data)
    assert [e.split(":")[0] for e in errors] == ["line 3", "line 4"], errors
    assert "[not-json]" in errors[0] and "[not-object]" in errors[1]
