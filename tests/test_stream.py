"""Reading a session entry by entry (piconv.stream) and converting as it is read.

A streamed entry must be the entry piconv.load builds; a file that cannot be streamed
must say so before anything differs, and piconv.convert must then give the same output
and report as from the whole document.
"""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

import orjson
import piconv
import pytest
from piconv import reader
from piconv.api import convert
from piconv.stream import NeedsWholeSession, SessionStream

from .conftest import corpus_files, corpus_ids, session_bytes


def _msg(
    entry_id: str,
    parent: str | None,
    text: str,
    role: str = "user",
    ts: str | None = "2026-01-01T00:00:01.000Z",
) -> dict:
    entry = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "message": {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1767225601000},
    }
    if ts is not None:
        entry["timestamp"] = ts
    return entry


def _both(source: bytes | Path) -> tuple[bytes, dict, bytes, dict]:
    """The ASF output and report from the whole document, then from the stream."""
    whole, streamed = io.BytesIO(), io.BytesIO()
    report_whole = convert(piconv.load(source), "asf", whole)
    report_streamed = convert(source, "asf", streamed)
    return whole.getvalue(), report_whole.to_json(), streamed.getvalue(), report_streamed.to_json()


@pytest.mark.shared
@pytest.mark.parametrize("path", corpus_files(), ids=corpus_ids())
def test_streamed_conversion_equals_whole_document(path: Path) -> None:
    whole, report_whole, streamed, report_streamed = _both(path)
    assert streamed == whole
    assert report_streamed == report_whole


@pytest.mark.shared
@pytest.mark.parametrize("path", corpus_files(), ids=corpus_ids())
def test_streamed_entries_are_the_loaded_entries(path: Path) -> None:
    doc = piconv.load(path)
    try:
        stream = SessionStream(str(path), str(path))
        entries = list(stream)
    except NeedsWholeSession:
        # only a file that is not regular may refuse: an old version, or a tree out of order
        assert (
            doc.session.source_version in (None, 1)
            or any(
                e.parent_id is not None and [x.id for x in doc.entries].index(e.parent_id) > i
                for i, e in enumerate(doc.entries)
            )
            or any(
                i.code in ("duplicate-id", "dangling-parent", "extra-header", "late-header", "missing-header")
                for i in doc.issues
            )
        )
        return
    assert tuple(entries) == doc.entries
    assert stream.session == doc.session
    assert stream.issues == doc.issues
    assert stream.lines_read == doc.lines_read


IRREGULAR = {
    "duplicate id": (
        session_bytes(_msg("a", None, "one"), _msg("b", "a", "two"), _msg("a", "b", "three")),
        "used again",
    ),
    "parent later in the file": (
        session_bytes(_msg("b", "a", "child first"), _msg("a", None, "parent")),
        "not an earlier entry",
    ),
    "dangling parent": (
        session_bytes(_msg("a", None, "one"), _msg("b", "nowhere", "two")),
        "not an earlier entry",
    ),
    "further header": (
        session_bytes(
            _msg("a", None, "one"), {"type": "session", "version": 3, "id": "x"}, _msg("b", "a", "two")
        ),
        "further session header",
    ),
    "version 1": (
        session_bytes({"type": "message", "message": {"role": "user", "content": "hi"}}, version=1),
        "version 2 or later",
    ),
    "no header": (session_bytes(_msg("a", None, "one"), header={}), "version 2 or later"),
}


@pytest.mark.parametrize("name", sorted(IRREGULAR))
def test_irregular_files_refuse_streaming_and_convert_whole(name: str) -> None:
    data, reason = IRREGULAR[name]
    with pytest.raises(NeedsWholeSession, match=reason):
        list(SessionStream(data))
    whole, report_whole, streamed, report_streamed = _both(data)
    assert streamed == whole
    assert report_streamed == report_whole


def test_bad_lines_are_reported_the_same_way() -> None:
    data = session_bytes(
        _msg("a", None, "one"), b"{not json", _msg("b", "a", "two"), b"[1, 2]", _msg("c", "b", "three")
    )
    whole, report_whole, streamed, report_streamed = _both(data)
    assert streamed == whole
    assert report_streamed == report_whole
    assert report_streamed["problems"] == 2
    stream = SessionStream(data)
    assert [e.id for e in stream] == ["a", "b", "c"]
    assert [i.line for i in stream.issues] == [3, 5]


def test_header_without_id_or_timestamp_reads_ahead_only_as_far_as_needed() -> None:
    header = {"type": "session", "version": 3, "cwd": "/w"}
    entries = [
        _msg("a", None, "no time", ts=None),
        _msg("b", "a", "no time", ts=None),
        _msg("c", "b", "timed", ts="2026-03-04T05:06:07.000Z"),
    ]
    whole, report_whole, streamed, report_streamed = _both(session_bytes(*entries, header=header))
    assert streamed == whole
    assert report_streamed == report_whole
    head = orjson.loads(streamed.splitlines()[0])
    assert head["created_at"] == "2026-03-04T05:06:07Z"
    assert len(streamed.splitlines()) > 3  # every entry written, those read ahead included


def test_streamed_conversion_holds_one_entry_not_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The reader holds one chunk of the file and its lines: a small chunk here, so that a
    # few MB show what a 100 MB file does with the usual 4 MiB chunk.
    monkeypatch.setattr(reader, "CHUNK_BYTES", 256 * 1024)
    chunk = "lorem ipsum dolor sit amet " * 400  # 10.8 kB a message

    def session(count: int) -> Path:
        entries = [
            _msg(f"e{i}", f"e{i - 1}" if i else None, f"{i} {chunk}", role="user") for i in range(count)
        ]
        path = tmp_path / f"s{count}.jsonl"
        path.write_bytes(session_bytes(*entries))
        return path

    def peak(run: object) -> int:
        tracemalloc.start()
        try:
            run()  # type: ignore[operator]
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = session(400), session(1200)
    grown = large.stat().st_size - small.stat().st_size
    convert(small, "asf", tmp_path / "warm-up.jsonl")  # imports and caches are not the conversion's
    loaded = peak(lambda: piconv.load(large)) - peak(lambda: piconv.load(small))
    streamed = peak(lambda: convert(large, "asf", tmp_path / "l.jsonl")) - peak(
        lambda: convert(small, "asf", tmp_path / "s.jsonl")
    )
    assert loaded > grown, (loaded, grown)  # the whole document is held
    # only the per-entry maps grow (ASF ids, settings, ancestry): ~500 bytes an entry, 1/20 of one
    assert streamed < grown / 8, (streamed, grown)
    doc_out = tmp_path / "doc.jsonl"
    convert(piconv.load(large), "asf", doc_out)
    assert (tmp_path / "l.jsonl").read_bytes() == doc_out.read_bytes()


def test_stdin_and_documents_are_not_streamed_but_convert_the_same() -> None:
    data = session_bytes(_msg("a", None, "one"), _msg("b", "a", "two"))
    from_stream = io.BytesIO()
    convert(io.BytesIO(data), "asf", from_stream)  # a binary stream cannot be read twice: converted whole
    from_bytes = io.BytesIO()
    convert(data, "asf", from_bytes)
    assert from_stream.getvalue() == from_bytes.getvalue()


def _streams(path: Path) -> bool:
    try:
        list(SessionStream(path))
    except NeedsWholeSession:
        return False
    return True


_STREAMED = [path for path in corpus_files() if _streams(path)]


@pytest.mark.shared
def test_most_corpus_files_stream() -> None:
    assert len(_STREAMED) >= 12
