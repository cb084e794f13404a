"""The reader's nesting limit (MAX_DEPTH): a line at the limit is kept and every format
writes it; one level deeper is reported as ``too-deep`` at its line and skipped."""

from __future__ import annotations

import io

import orjson
import piconv
import pytest
from conftest import session_bytes
from piconv.jsonl import MAX_DEPTH, depth_over, read_records

FORMATS = ("asf", "openai", "ir", "pi", "markdown", "html")


def _nested(levels: int) -> object:
    """A value of exactly ``levels`` levels of arrays and objects."""
    value: object = "leaf"
    for i in range(levels):
        value = [value] if i % 2 else {"k": value}
    return value


def _line_of_depth(depth: int) -> dict:
    # line (1) -> message (2) -> content (3) -> tool call (4) -> arguments (5) -> ...
    line = {
        "type": "message",
        "id": "b",
        "parentId": "a",
        "timestamp": "2026-01-01T00:00:02.000Z",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "c1", "name": "t", "arguments": {"deep": _nested(depth - 5)}}
            ],
            "timestamp": 2,
            "unknownMember": _nested(depth - 2),
        },
    }
    assert not depth_over(line, depth) and depth_over(line, depth - 1)
    return line


def _session(depth: int) -> bytes:
    return session_bytes(
        {
            "type": "message",
            "id": "a",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        },
        _line_of_depth(depth),
    )


def test_depth_is_measured_exactly() -> None:
    assert not depth_over({}, 1) and depth_over({"a": []}, 1) and not depth_over({"a": [1, "x"]}, 2)
    assert depth_over(_nested(300), 299) and not depth_over(_nested(300), 300)


def test_a_line_at_the_limit_is_kept_and_one_deeper_is_reported_at_its_line() -> None:
    kept = read_records(_session(MAX_DEPTH))
    assert [p.code for p in kept.problems] == [] and len(kept.records) == 3
    deep = read_records(_session(MAX_DEPTH + 1))
    assert [(p.line, p.code) for p in deep.problems] == [(3, "too-deep")]
    assert len(deep.records) == 2 and deep.lines_read == 3


def test_the_limit_holds_for_a_last_line_without_newline() -> None:
    data = _session(MAX_DEPTH + 1).rstrip(b"\n")
    assert [(p.line, p.code) for p in read_records(data).problems] == [(3, "too-deep")]


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_writes_a_session_nested_to_the_limit(fmt: str) -> None:
    out = io.BytesIO()
    report = piconv.convert(_session(MAX_DEPTH), fmt, out)  # validated while written
    assert out.getvalue() and "input:too-deep" not in report.losses and report.problems == 0


def test_the_deepest_value_survives_the_round_trip_through_pi() -> None:
    out = io.BytesIO()
    piconv.convert(_session(MAX_DEPTH), "pi", out)
    assert orjson.loads(out.getvalue().splitlines()[2]) == _line_of_depth(MAX_DEPTH)
