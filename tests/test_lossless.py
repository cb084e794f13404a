"""pi → IR → pi gives back every line's JSON value, unknown members included."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import piconv
import pytest
from conftest import corpus_files, corpus_ids, session_bytes
from piconv import ir
from piconv.pi.entries import dump_entry
from piconv.pi.write import pi_lines


def _values_by_line(data: bytes) -> dict[int, object]:
    out = {}
    for n, line in enumerate(data.split(b"\n"), 1):
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            out[n] = value
    return out


@pytest.mark.shared
@pytest.mark.parametrize("path", corpus_files(), ids=corpus_ids())
def test_every_corpus_line_survives_the_round_trip(path: Path) -> None:
    data = path.read_bytes()
    doc = piconv.load(path)
    expected = _values_by_line(data.removeprefix(b"\xef\xbb\xbf"))
    written = dict(pi_lines(doc))
    assert written == expected
    # and the `pi` format writes exactly those values, line by line
    out = io.BytesIO()
    piconv.convert(doc, "pi", out)
    assert [orjson.loads(x) for x in out.getvalue().splitlines()] == [expected[k] for k in sorted(expected)]


def test_unknown_members_at_every_depth_survive() -> None:
    entry = {
        "type": "message",
        "id": "a1",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "future": {"x": [1, 2]},
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "hi", "newFlag": True},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}, "extra": 1},
                {"type": "hologram", "payload": "?"},
                "not-an-object",
            ],
            "api": "x-api",
            "provider": "p",
            "model": "m",
            "usage": {
                "input": 1,
                "output": 2,
                "totalTokens": 3,
                "cost": {"total": 0.1, "tax": 0.01},
                "gpu": "h100",
            },
            "stopReason": "toolUse",
            "diagnostics": [{"code": 1}],
            "timestamp": 1,
        },
    }
    odd = {"type": "teleport", "id": "b2", "parentId": "a1", "timestamp": "t", "where": "mars"}
    wrong = {
        "type": "message",
        "id": "c3",
        "parentId": "b2",
        "timestamp": 5,
        "message": {"role": "user", "content": 42},
    }
    nulls = {"type": "label", "id": "d4", "parentId": "c3", "timestamp": "t", "targetId": "a1", "label": None}
    doc = piconv.load(session_bytes(entry, odd, wrong, nulls))
    assert [dump_entry(e) for e in doc.entries] == [entry, odd, wrong, nulls]
    msg = doc.entries[0].message
    assert isinstance(msg, ir.AssistantMessage)
    assert msg.stop_reason == "tool_use"
    assert msg.extra == {"diagnostics": [{"code": 1}]}
    assert msg.usage is not None and msg.usage.extra == {"gpu": "h100"}
    assert isinstance(msg.content, tuple) and isinstance(msg.content[2], ir.UnknownPart)
    assert doc.entries[1].kind == "unknown" and doc.entries[1].extra["where"] == "mars"
    user = doc.entries[2].message
    assert isinstance(user, ir.UserMessage) and user.content is None and user.extra == {"content": 42}
    assert doc.entries[2].timestamp is None and doc.entries[2].extra["timestamp"] == 5
    label = doc.entries[3].body
    assert isinstance(label, ir.Label) and label.label is None and doc.entries[3].extra == {"label": None}


def test_version_1_entries_write_back_without_the_ids_piconv_gave_them() -> None:
    data = session_bytes(
        {"type": "message", "timestamp": "t1", "message": {"role": "user", "content": "a", "timestamp": 1}},
        {
            "type": "compaction",
            "timestamp": "t2",
            "summary": "s",
            "firstKeptEntryIndex": 1,
            "tokensBefore": 5,
        },
        header={"type": "session", "id": "x", "timestamp": "t0", "cwd": "/"},
    )
    doc = piconv.load(data)
    assert [e.id for e in doc.entries] == ["00000001", "00000002"]
    assert doc.entries[1].body.first_kept_id == "00000001"  # type: ignore[union-attr]
    values = [v for _l, v in pi_lines(doc)]
    assert values == [orjson.loads(x) for x in data.splitlines()]
    migrated = [v for _l, v in pi_lines(doc, migrate=True)]
    assert migrated[0]["version"] == 3
    assert migrated[2]["firstKeptEntryId"] == "00000001" and "firstKeptEntryIndex" not in migrated[2]
    assert migrated[2]["parentId"] == "00000001"
