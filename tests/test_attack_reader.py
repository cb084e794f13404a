"""An integer literal beyond the double range is a number JavaScript reads as infinity,
like ``1e400``: the line is kept with an ``infinite-number`` problem, never a crash of
the run (it raised OverflowError) nor a line lost as "not JSON" (past Python's limit on
the digits of an int)."""

from __future__ import annotations

import io

import piconv
import pytest
from piconv.jsonl import read_records

from .conftest import session_bytes


@pytest.mark.parametrize("digits", [310, 400, 5000, 100_000])
def test_a_huge_integer_is_read_as_infinity(digits: int) -> None:
    data = b'{"a":1' + b"0" * digits + b',"b":[-1' + b"0" * digits + b"]}\n"
    result = read_records(data)
    assert [(p.line, p.code) for p in result.problems if p.code == "infinite-number"] == [
        (1, "infinite-number")
    ]
    value = result.records[0].value
    assert value["a"] == float("inf") and value["b"] == [float("-inf")]


def test_a_huge_integer_costs_no_conversion() -> None:
    line = {
        "type": "message",
        "id": "a",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "hello", "timestamp": 1},
    }
    data = session_bytes(line).replace(b'"timestamp":1}', b'"timestamp":1' + b"0" * 400 + b"}")
    assert b"0" * 400 in data
    for fmt in ("ir", "markdown", "html", "asf", "pi", "openai", "sqlite"):
        report = piconv.convert(piconv.load(data), fmt, io.BytesIO())
        assert report.entries_written >= 1, fmt  # the entry is kept (asf adds its header)
