"""The plugin's own tests: it converts real sessions through piconv's public API."""

from __future__ import annotations

import io
from pathlib import Path

import piconv
import pytest
from piconv import ir
from piconv_turns import check_turns, write_turns

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _convert(doc: ir.Document, **options: object) -> str:
    out = io.BytesIO()
    write_turns(doc, out, options, piconv.Report(format="turns"))
    return out.getvalue().decode()


@pytest.fixture(scope="module")
def doc() -> ir.Document:
    sessions = sorted(EXAMPLES.glob("*.jsonl"))
    assert sessions, f"no example sessions in {EXAMPLES}"
    return piconv.load(sessions[0])


def test_one_line_per_turn_along_the_leaf_path(doc: ir.Document) -> None:
    text = _convert(doc)
    assert check_turns(text.encode()) == []
    path = doc.path()
    messages = [
        e for e in path if isinstance(e.body, ir.MessageBody) and not isinstance(e.message, ir.SystemMessage)
    ]
    lines = text.splitlines()
    assert len(lines) >= len(messages) > 0
    assert lines[0].split()[1] in {"user", "model", "label", "summary"}


def test_width_cuts_and_zero_keeps_everything(doc: ir.Document) -> None:
    short = _convert(doc, width=20)
    assert all(len(line.split("  ", 1)[1].split(None, 1)[-1]) <= 20 for line in short.splitlines())
    full = _convert(doc, width=0)
    assert len(full) > len(short)


def test_control_characters_never_reach_the_output() -> None:
    entry = ir.Entry(
        id="a",
        parent_id=None,
        timestamp="2026-01-01T00:00:00Z",
        body=ir.MessageBody(ir.UserMessage(content="hi\x1b[31m red\x07\nnext")),
        origin=ir.Origin(line=2),
    )
    document = ir.Document(session=ir.SessionInfo(), entries=(entry,), leaf_id="a")
    text = _convert(document)
    assert "\x1b" not in text and "\x07" not in text
    assert text == "2026-01-01T00:00:00Z  user       hi[31m red next\n"
    assert check_turns(text.encode()) == []


def test_checker_rejects_a_broken_line() -> None:
    assert check_turns(b"no-two-spaces-here\n")
    assert check_turns(b"2026  user  ok") == ["last line: no newline at the end"]


def test_the_report_counts_what_is_left_out() -> None:
    doc = piconv.load(EXAMPLES / "branching.jsonl")
    report = piconv.Report(format="turns")
    out = io.BytesIO()
    write_turns(doc, out, {"width": 20}, report)
    written = out.getvalue().decode().count("\n")
    path = doc.path()
    assert report.entries_written == written
    assert report.losses["other-branches"].count == len(doc.entries) - len(path)
    # every entry of the path either made a line or is counted as not shown
    assert written + report.losses["entry-not-shown"].count == len(path)
    assert report.losses["text-cut"].count > 0
    assert "nothing lost" not in report.summary()
