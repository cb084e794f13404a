"""RFC 0001's context of another writer's ASF file, made from the document
(``converters/asf/read/views.py``), against the one made from the file's own entries.

``tests/data/asf/another-writer.asf.jsonl`` is a file such a writer could write, valid
by ``piconv validate --format asf`` (ids are the entries' envelope hashes): instruction
parts (written whole, kept by position, named by hash in and out of force), tools added
and removed, passthrough settings, `omit` (an item, other models' reasoning), a
`pi:context_edit`, two compactions (the second a provider's encrypted summary) with
pinned items and checkpoints, a branch summary, a `replace`, labels, a leaf label,
record entries (`run`, `decision`, `dispatch`, `env`, `info`, `custom`), an extension
entry, `parents`, and items of every kind (images, refusals, reasoning of several
summary parts, calls with spaced arguments, outputs as parts).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import piconv
import pytest
from piconv import ir
from piconv.converters.asf.read import request_context
from test_asf_read import TS, _same_rfc_context, asf_bytes, item, render, to_asf, user

REPO = Path(__file__).resolve().parent.parent
HAND_WRITTEN = REPO / "tests" / "data" / "asf" / "another-writer.asf.jsonl"
EXAMPLE = REPO / "examples" / "basic.jsonl"


def test_a_hand_written_file_has_the_context_its_own_entries_give() -> None:
    data = HAND_WRITTEN.read_bytes()
    doc = piconv.load(data, reader="asf")
    assert doc.issues == ()
    assert len(doc.leaves()) == 2
    _same_rfc_context(data)


def _call(arguments: str, **more: Any) -> dict[str, Any]:
    return {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": arguments, **more}


def _config(**more: Any) -> dict[str, Any]:
    return {"type": "config", "id": "c", "parent": None, "ts": TS % 0, "model": "m-1", **more}


CASES = {
    # arguments that are a JSON string: the IR holds the string, which the view must
    # not spell as the bare text (read back, "42" would be a number)
    "arguments a JSON string of a number": [_config(), item("f", "c", _call('"42"'), 1, response="r")],
    "arguments a JSON string of an object": [_config(), item("f", "c", _call('"{\\"a\\": 1}"'), 1)],
    "arguments no JSON": [_config(), item("f", "c", _call('{"a": '), 1)],
    # a reasoning item or a call carrying a member the profile does not define, role
    "reasoning with a role": [
        _config(),
        item("r", "c", {"type": "reasoning", "role": "assistant", "summary": []}, 1, response="r"),
    ],
    "a call with a role": [_config(), item("f", "c", _call("{}", role="assistant"), 1)],
    # a tool as an SDK dumps it: members it does not set are null
    "a tool with null members": [
        _config(
            instructions="i",
            tools_added=[{"type": "function", "name": "f", "description": None, "parameters": None}],
        )
    ],
    # members of no shape the IR models, kept as written
    "instructions that are no string": [_config(instructions=["a", "b"]), item("u", "c", user("hi"), 1)],
    "tools removed by no name": [
        _config(instructions="i", tools_added=[{"type": "web_search_preview"}]),
        {"type": "config", "id": "d", "parent": "c", "ts": TS % 1, "tools_removed": [7]},
    ],
}


@pytest.mark.parametrize("entries", CASES.values(), ids=CASES.keys())
def test_an_entry_seen_from_the_document_is_the_entry_the_file_holds(entries: list[dict[str, Any]]) -> None:
    _same_rfc_context(asf_bytes(*entries))


def test_a_tool_declared_with_null_members_keeps_them() -> None:
    tool = {"type": "function", "name": "f", "description": None, "parameters": None, "strict": False}
    doc = piconv.load(asf_bytes(_config(instructions="i", tools_added=[tool])), reader="asf")
    assert request_context(doc).settings["tools"] == [tool]


TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"


def _everywhere(token: str) -> bytes:
    """A file holding ``token`` in every member the context algorithm reads."""

    def text(kind: str, words: str) -> dict[str, Any]:
        return {"type": kind, "text": f"{words} {token}"}

    return asf_bytes(
        _config(
            instructions=f"inst {token}",
            instructions_parts=[{"id": "p", "text": f"inst {token}", "source": token}],
            tools_added=[{"type": "function", "name": "t", "description": token, "parameters": {"d": token}}],
            extra={"metadata": {"k": token}},
        ),
        item("u", "c", user(f"user {token}"), 1),
        item("r", "u", {"type": "reasoning", "summary": [text("summary_text", "a")]}, 2, response="x"),
        item("f", "r", _call(orjson.dumps({"key": token}).decode()), 3, response="x"),
        item(
            "o",
            "f",
            {"type": "function_call_output", "call_id": "call_1", "output": [text("input_text", "o")]},
            4,
        ),
        item("a", "o", {"type": "message", "role": "assistant", "content": [text("output_text", "a")]}, 5),
        {
            "type": "config",
            "id": "d",
            "parent": "a",
            "ts": TS % 6,
            "instructions_parts": [{"id": "q", "text": token}],
        },
        {
            "type": "pi:context_edit",
            "id": "e",
            "parent": "d",
            "ts": TS % 7,
            "items": ["o"],
            "replacement": [text("input_text", "e")],
        },
        {
            "type": "compaction",
            "id": "k",
            "parent": "e",
            "ts": TS % 8,
            "first_kept": "o",
            "summary": user(f"summary {token}"),
            "pinned": [user(f"pinned {token}")],
            "config": {
                "model": "m-1",
                "instructions": token,
                "tools": [{"type": "function", "name": "t", "description": token}],
            },
        },
        {
            "type": "branch_summary",
            "id": "b",
            "parent": "k",
            "ts": TS % 9,
            "from": "u",
            "summary": user(f"branch {token}"),
        },
    )


@pytest.mark.parametrize("leaf", ["d", "b"])  # before the compaction, and after it
def test_the_context_of_a_redacted_document_holds_no_secret_wherever_the_file_had_it(leaf: str) -> None:
    doc = piconv.load(_everywhere(TOKEN), reader="asf")
    messages = doc.context(leaf).messages
    assert len(messages) == 6 and all(TOKEN in repr(m.message) for m in messages)
    redacted = piconv.redact(doc).document
    assert TOKEN not in repr(redacted.context(leaf))
    assert TOKEN not in repr(request_context(redacted, leaf))
    assert TOKEN not in render(redacted, "openai").decode()


def _continued() -> bytes:
    """piconv's ASF of a pi session (examples/basic.jsonl), continued by another writer:
    a fold keeping entries from the middle of an assistant turn piconv wrote (its second
    item: the IR names the turn), an omit naming an entry piconv wrote, pinned items,
    instruction parts, a branch from an entry piconv wrote."""
    written = [orjson.loads(line) for line in to_asf(EXAMPLE.read_bytes()).splitlines()]
    last = written[-1]["id"]
    turn = [e["id"] for e in written if e.get("legacy_id") == "bf8f0e48"]  # reasoning, reply, call, response
    user_item = next(e["id"] for e in written if e.get("legacy_id") == "1705a7ad")
    ts = "2027-01-01T00:00:0%dZ"

    def entry(kind: str, entry_id: str, parent: str, n: int, **more: Any) -> dict[str, Any]:
        return {"type": kind, "id": entry_id, "parent": parent, "ts": ts % n, **more}

    parts = [{"id": "product", "text": "Acme."}, {"id": "memory", "text": "Tabs."}]
    more = [
        entry(
            "config",
            "x-c",
            last,
            0,
            replace=True,
            model="m-2",
            instructions_parts=parts,
            omit={"items": [user_item]},
        ),
        entry("item", "x-u", "x-c", 1, item=user("go on")),
        entry(
            "item",
            "x-r",
            "x-u",
            2,
            response="resp_x",
            item={"type": "reasoning", "summary": [{"type": "summary_text", "text": t} for t in ("a", "b")]},
        ),
        entry("response", "x-p", "x-r", 2, response_id="resp_x", model="m-2"),
        entry(
            "compaction",
            "x-k",
            "x-p",
            3,
            first_kept=turn[1],
            summary=user("summary"),
            pinned=[user("pinned")],
            config={
                "model": "m-2",
                "instructions": "Acme.\n\nTabs.",
                "tools": [{"type": "function", "name": "t"}],
            },
        ),
        entry("item", "x-v", "x-k", 4, item=user("after the fold")),
        entry("branch_summary", "x-b", turn[-1], 5, **{"from": "x-v"}, summary=user("left")),
        entry("item", "x-w", "x-b", 6, item=user("elsewhere")),
    ]
    return b"".join(orjson.dumps(value) + b"\n" for value in [*written, *more])


def test_a_file_piconv_wrote_that_another_writer_continued_has_the_context_its_own_entries_give() -> None:
    # The context of such a file is made from the document written again by the asf
    # format, which wrote the other writer's entries as it writes pi's: their pinned
    # items, omit, instruction parts and the fold's first kept entry were lost.
    data = _continued()
    doc = piconv.load(data, reader="asf")
    assert doc.issues == () and len(doc.leaves()) == 2
    _same_rfc_context(data)
    shown = [m.message for m in doc.context("x-v").messages]
    assert any(isinstance(m, ir.UserMessage) and m.content[0].text == "pinned" for m in shown)  # type: ignore[union-attr,index]
