"""What a line the pi writer writes must be: one JSON object a pi reader reads back whole."""

from __future__ import annotations

from typing import Any


def line_problem(value: Any, data: bytes, *, header: bool) -> str | None:
    """Why the written line ``data`` (``value`` dumped) would not read back as the same
    line, or ``None``: it must be one JSON object within the reader's line limit, and the
    header's line (where the source had it) a session header. A line of JSON written by
    :func:`piconv.jsonio.dumps` holds no newline, no NUL byte and only UTF-8."""
    from ..jsonl import MAX_LINE_BYTES

    if type(value) is not dict:
        return f"[not-object] a {type(value).__name__} is not a JSON object"
    if len(data) > MAX_LINE_BYTES:
        return f"[line-too-long] the line is {len(data)} bytes, over the limit of {MAX_LINE_BYTES}"
    if header and value.get("type") != "session":
        return "[not-a-header] the first line is not a session header"
    return None
