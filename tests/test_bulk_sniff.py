"""A session's first line, as a directory run tells a session from another file
(``piconv.bulk.sniff``): read chunk by chunk, it gives what splitting the whole file on
newlines gives, wherever the lines fall against the chunks."""

from __future__ import annotations

import io
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from piconv.bulk import sniff

LINES = st.sampled_from(
    [
        b"",
        b"   ",
        b"not json",
        b'{"type":"title","title":"t"}',
        b'{"type":"session","id":"s-1","cwd":"/w"}',
        b'{"type":"session","id":"s-1","cwd":"/w"}\r',
        b'\xef\xbb\xbf{"type":"session","id":"bom"}',
        b'{"type":"message","id":"m"}',
        b"[1, 2]",
        b'{"a":"' + b"x" * 5000 + b'"}',  # longer than a chunk
        b'{"a":"' + b"y" * 9000,  # cut short: no JSON
    ]
)


def whole_file(data: bytes) -> Any:
    """The rule applied to the whole file at once."""
    title_seen = False
    for raw in data.split(b"\n"):
        value = sniff._parse(raw)
        if value is sniff._SKIP:
            continue
        if not title_seen and type(value) is dict and value.get("type") == "title":
            title_seen = True
            continue
        return value
    return None


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, max_size=8), st.booleans())
def test_chunked_reading_finds_the_line_the_whole_file_holds(
    lines: list[bytes], newline_at_end: bool
) -> None:
    data = b"\n".join(lines) + (b"\n" if newline_at_end and lines else b"")
    assert sniff._first_value(io.BytesIO(data)) == whole_file(data)


def test_a_first_line_past_the_scanned_mib_is_too_far() -> None:
    data = b'{"a":"' + b"z" * sniff.SCAN_BYTES + b'"}\n{"type":"session","id":"late"}\n'
    assert sniff._first_value(io.BytesIO(data)) is sniff._TOO_FAR
