"""Markdown's front matter totals are counts and amounts: a negative token count or a cost
beyond the double range in a session is not added, and the output passes its own check."""

from __future__ import annotations

import io

import piconv
from conftest import session_bytes
from piconv.converters.markdown import frontmatter


def _session(usage: bytes) -> bytes:
    base = session_bytes(
        {
            "type": "message",
            "id": "a",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "b",
            "parentId": "a",
            "timestamp": "2026-01-01T00:00:02.000Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "ok"}],
                "timestamp": 2,
                "usage": "USAGE",
            },
        },
        {
            "type": "message",
            "id": "c",
            "parentId": "b",
            "timestamp": "2026-01-01T00:00:03.000Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "more"}],
                "timestamp": 3,
                "usage": {"input": 7, "output": 2, "cost": {"total": 0.5}},
            },
        },
    )
    return base.replace(b'"USAGE"', usage)


def _totals(data: bytes) -> dict:
    out = io.BytesIO()
    piconv.convert(data, "markdown", out)  # validated: the front matter passes its schema
    lines, _start, _end = frontmatter.locate(out.getvalue().decode())
    return frontmatter.parse(lines)


def test_a_negative_token_count_is_not_added() -> None:
    totals = _totals(_session(b'{"input": -5, "output": 3}'))
    assert totals["tokens"]["input"] == 7 and totals["tokens"]["output"] == 5


def test_a_cost_beyond_the_double_range_is_not_added() -> None:
    totals = _totals(_session(b'{"input": 1, "cost": {"total": 1e400, "input": -1e400}}'))
    assert totals["cost"]["total"] == 0.5 and totals["tokens"]["input"] == 8
