"""Streaming ``--to asf`` holds one entry plus an index of the entries written: what grows
with the session is the index, measured here per entry (tracemalloc: what is still held
once every entry is written, as the slope between two session sizes, one twice the other
so every hash table is as full in both; imports and compiled schemas do not count). docs/formats/asf.md states
the figure: about 610-650 bytes per tiny entry (four maps per entry held 700-850)."""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path
from typing import Any

import piconv
from piconv.converters.asf.writer import start
from piconv.report import Report
from piconv.stream import SessionStream

HEADER = b'{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'


def tiny_session(path: Path, entries: int) -> Path:
    lines = [HEADER]
    parent = "null"
    for i in range(entries):
        entry_id = f"{i:08x}"
        if i % 2:
            message = b'{"role":"assistant","content":[{"type":"text","text":"ok"}],"provider":"p","model":"m","stopReason":"stop","timestamp":1}'
        else:
            message = b'{"role":"user","content":"hello %d","timestamp":1}' % i
        lines.append(
            b'{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-01-01T00:00:01.000Z","message":%s}\n'
            % (entry_id.encode(), parent.encode(), message)
        )
        parent = f'"{entry_id}"'
    path.write_bytes(b"".join(lines))
    return path


class Discard(io.RawIOBase):
    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        return len(data)


def held_after(source: Path) -> int:
    """The memory still held once every entry of ``source`` is written (the index of
    what was written: the entries themselves are gone by then)."""
    stream = SessionStream(str(source), str(source))
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        writer = start(stream.session, [], Discard(), {"validate": True}, Report("asf"))
        for entry in stream:
            writer.write_entry(entry)
        return tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


def test_the_index_grows_by_less_than_660_bytes_per_entry(tmp_path: Path) -> None:
    held_after(tiny_session(tmp_path / "warm.jsonl", 100))  # imports, schemas, caches
    small = held_after(tiny_session(tmp_path / "small.jsonl", 8_000))
    large = held_after(tiny_session(tmp_path / "large.jsonl", 16_000))
    per_entry = (large - small) / 8_000
    assert 400 < per_entry < 660, per_entry


def test_a_streamed_conversion_is_the_whole_one(tmp_path: Path) -> None:
    source = tiny_session(tmp_path / "s.jsonl", 50)
    streamed, whole = io.BytesIO(), io.BytesIO()
    piconv.convert(source, "asf", streamed)
    piconv.convert(piconv.load(source), "asf", whole)
    assert streamed.getvalue() == whole.getvalue()
