"""Token totals when a call has no ``totalTokens`` (older pi sessions): input + output +
cache read + cache write, as pi's own statistics count them, the same in every place
piconv shows a total."""

from __future__ import annotations

import io

import orjson
import piconv
import pytest
from conftest import session_bytes
from piconv.bulk.worker import session_meta
from piconv.inspect import summarize
from piconv.ir import Usage, total_tokens


def _assistant(eid: str, parent: str, usage: dict) -> dict:
    return {
        "type": "message",
        "id": eid,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "done"}],
            "provider": "anthropic",
            "model": "claude-x",
            "usage": usage,
            "stopReason": "stop",
            "timestamp": 1,
        },
    }


def _session() -> bytes:
    user = {
        "type": "message",
        "id": "u1",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": "hello", "timestamp": 0},
    }
    old = {"input": 10, "output": 5, "cacheRead": 1000, "cacheWrite": 200, "cost": {"total": 0.5}}
    new = {
        "input": 1,
        "output": 2,
        "cacheRead": 3,
        "cacheWrite": 4,
        "totalTokens": 7,
        "cost": {"total": 0.25},
    }
    return session_bytes(user, _assistant("a1", "u1", old), _assistant("a2", "a1", new))


def test_the_sum_of_the_parts_stands_in_for_a_missing_total() -> None:
    assert (
        total_tokens(Usage(input_tokens=10, output_tokens=5, cache_read_tokens=1000, cache_write_tokens=200))
        == 1215
    )
    assert total_tokens(Usage(input_tokens=10, total_tokens=12)) == 12  # the source's own figure wins
    assert total_tokens(Usage(input_tokens=-5, output_tokens=3)) == 3  # a negative count is no count
    assert total_tokens(Usage()) == 0


def test_inspect_front_matter_and_the_archive_agree() -> None:
    doc = piconv.load(io.BytesIO(_session()))
    assert summarize(doc)["tokens"]["total"] == 1215 + 7
    assert session_meta(doc)["tokens"] == 1215 + 7
    out = io.BytesIO()
    piconv.convert(doc, "markdown", out)
    front = out.getvalue().split(b"---\n")[1].decode()
    assert "total: 1222" in front, front


def test_inspect_counts_cost_as_every_total_does() -> None:
    # a call recorded before pi wrote a cost total: its parts stand in for it, in
    # `piconv inspect` as in stats, the archive and the trajectories
    user = orjson.loads(_session().splitlines()[1])
    parts = {"input": 0.125, "output": 0.25, "cacheRead": 0.0625, "cacheWrite": 0.5}
    usage = {"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "cost": parts}
    doc = piconv.load(io.BytesIO(session_bytes(user, _assistant("a1", "u1", usage))))
    assert summarize(doc)["cost"] == piconv.usage_totals(doc.entries).cost == 0.9375


@pytest.mark.shared
def test_the_large_corpus_session_is_no_longer_zero(shared) -> None:
    doc = piconv.load(str(shared / "corpus" / "pi" / "badlogic__pi-mono__large-session.jsonl"))
    tokens = summarize(doc)["tokens"]
    assert (
        tokens["total"] == tokens["input"] + tokens["output"] + tokens["cache_read"] + tokens["cache_write"]
    )
    assert tokens["total"] > 47_000_000
    assert orjson.dumps(tokens)  # plain integers
