"""pi files come back byte for byte: every line nothing changed is written as it was read,
converted directly (``--to pi``) or read back from piconv's own ASF; a migration or a
redaction rewrites only the lines it changes, and the report says which."""

from __future__ import annotations

import io
import json
from pathlib import Path

import piconv
import pytest

from .conftest import corpus_files, corpus_ids

CORPUS = corpus_files()


def _to_pi(source: bytes | str, **options: object) -> tuple[bytes, piconv.Report]:
    sink = io.BytesIO()
    report = piconv.convert(source, "pi", sink, options or None)
    return sink.getvalue(), report


def _through_asf(source: bytes | str) -> tuple[bytes, piconv.Report]:
    asf = io.BytesIO()
    piconv.convert(source, "asf", asf)
    return _to_pi(asf.getvalue())


def _expected(data: bytes, dropped: set[int]) -> bytes:
    """``data`` without the lines the reader could not read, ending in a newline (as pi
    itself ends a file it opens)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return b"".join(line + b"\n" for n, line in enumerate(lines, 1) if n not in dropped)


def _pi_keeps_it(data: bytes) -> bool:
    """Whether pi 1.6.0 would leave the file as it is when it opens it: version 3 (older
    files it migrates and rewrites) ending in a newline (else it appends one)."""
    first = json.loads(data.split(b"\n", 1)[0])
    return type(first.get("version")) is int and first["version"] >= 3 and data.endswith(b"\n")


@pytest.mark.shared
@pytest.mark.parametrize("path", CORPUS, ids=corpus_ids())
@pytest.mark.parametrize("way", ["direct", "through ASF"])
def test_every_line_read_comes_back_as_its_bytes(path: Path, way: str) -> None:
    data = path.read_bytes()
    written, report = _to_pi(str(path)) if way == "direct" else _through_asf(str(path))
    skipped = ("not-json", "not-object", "glued-objects", "truncated-line", "invalid-utf8", "blank-line")
    dropped = {i.line for i in piconv.load(str(path)).issues if i.code in skipped}
    assert written == _expected(data, dropped)
    if _pi_keeps_it(data):
        assert written == data  # the very file
    assert "line-rewritten" not in report.losses and "line-migrated" not in report.losses


@pytest.mark.shared
def test_the_corpus_count() -> None:
    """The figure of the closing note: sessions pi would not rewrite, and how many come
    back as the very file, directly and through ASF."""
    kept = [p for p in CORPUS if _pi_keeps_it(p.read_bytes())]
    direct = [p for p in kept if _to_pi(str(p))[0] == p.read_bytes()]
    through = [p for p in kept if _through_asf(str(p))[0] == p.read_bytes()]
    assert len(kept) >= 15 and len(direct) == len(through) == len(kept)


# another writer's spelling: members sorted, ", " and ": " between them, non-ASCII escaped
OTHER = (
    b'{"cwd": "/w", "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "type": "session", "version": 3}\n'
    b'{"id": "a", "message": {"content": "caf\\u00e9", "role": "user", "timestamp": 1}, "parentId": null, '
    b'"timestamp": "2026-01-01T00:00:01.000Z", "type": "message"}\n'
    b'{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant",'
    b'"content":[{"type":"text","text":"ok"}],"api":"x","provider":"p","model":"m","usage":{"output":1,"input":2},'
    b'"stopReason":"stop","timestamp":2}}\n'
)


@pytest.mark.parametrize("way", ["direct", "through ASF"])
def test_another_writers_spelling_comes_back(way: str) -> None:
    written, report = _to_pi(OTHER) if way == "direct" else _through_asf(OTHER)
    assert written == OTHER and not report.losses


def test_an_explicit_version_1_is_kept() -> None:
    data = b'{"type":"session","version":1,"id":"s"}\n{"type":"message","message":{"role":"user","content":"hi"}}\n'
    assert _to_pi(data)[0] == data
    assert _through_asf(data)[0] == data
    doc = piconv.load(data)
    assert doc.session.source_version == 1 and doc.session.extra == {"version": 1}


def test_a_redaction_rewrites_only_the_lines_it_changes() -> None:
    data = (
        b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'
        b'{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
        b'"message":{"role":"user","content":"no secret here","timestamp":1}}\n'
        b'{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z",'
        b'"message":{"role":"user","content":"the code name is BLUEBIRD","timestamp":2}}\n'
    )
    sink = io.BytesIO()
    report = piconv.convert(data, "pi", sink, filters=[("redact", {"values": ["BLUEBIRD"]})])
    before, after = data.split(b"\n"), sink.getvalue().split(b"\n")
    changed = [n for n, (a, b) in enumerate(zip(before, after, strict=True), 1) if a != b]
    assert changed == [3] and b"BLUEBIRD" not in sink.getvalue()
    assert report.losses["line-rewritten"].lines == [3]
    # its members stay in the order they had
    assert list(json.loads(after[2])) == list(json.loads(before[2]))


def test_a_migration_rewrites_only_the_lines_it_changes() -> None:
    data = (
        b'{"type":"session","version":2,"id":"s","timestamp":"2026-01-01T00:00:00.000Z"}\n'
        b'{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"hi"}}\n'
        b'{"type":"message","id":"b","parentId":"a","message":{"role":"hookMessage","customType":"x","content":"c"}}\n'
    )
    written, report = _to_pi(data, migrate=True)
    before, after = data.split(b"\n"), written.split(b"\n")
    assert after[1] == before[1]  # nothing to migrate
    assert b'"version":3' in after[0] and b'"role":"custom"' in after[2]
    assert report.losses["line-migrated"].lines == [1, 3]
    assert list(json.loads(after[0])) == list(json.loads(before[0]))  # the version changed in its place


def test_a_reader_keeps_line_bytes_only_when_asked() -> None:
    assert piconv.load(OTHER).source_lines is None
    lines = piconv.load(OTHER, keep_source="bytes").source_lines
    assert lines is not None and len(lines) == 3
    layouts = piconv.load(OTHER, keep_source="layout").source_lines
    doc = piconv.load(OTHER, keep_source="layout")
    own = doc.source_lines.of(doc.entries[1], 3)
    assert own is not None and own[0] is None and own[1]["orders"]  # pi's own spelling: the layout is enough
    assert layouts is not None
