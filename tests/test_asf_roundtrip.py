"""pi → ASF → the asf reader → RFC 0001 context at every leaf gives pi's own context at that leaf.

Compared per leaf: the conversation turns in order (user text and images, assistant
text, reasoning, tool calls with their arguments, tool outputs, summaries, shell
commands) and the model in force. Every output also passes the ASF validator.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import SHARED
from piconv import ir
from piconv.converters.asf.filecheck import validate_asf
from piconv.converters.asf.read.context import AsfFile
from piconv.converters.asf.writer import write_asf
from piconv.report import Report

CORPUS = sorted([*SHARED.glob("corpus/pi/*.jsonl"), *SHARED.glob("corpus/pi-generated/*.jsonl")])


def load_asf(data: bytes) -> AsfFile:
    """The file as the asf reader keeps it for RFC 0001's context algorithm."""
    return AsfFile.of(data)


def load_pi(path: Path) -> ir.Document:
    import piconv

    return piconv.load(path)


def convert(doc: ir.Document) -> tuple[bytes, Report]:
    out = io.BytesIO()
    report = Report(format="asf")
    write_asf(doc, out, {}, report)
    return out.getvalue(), report


def _pi_parts(content: Any) -> list[tuple[Any, ...]]:
    if content is None:
        return []
    if type(content) is str:
        return [("text", content)]
    out: list[tuple[Any, ...]] = []
    for part in content:
        if type(part) is ir.Text:
            out.append(("text", part.text or ""))
        elif type(part) is ir.Image:
            out.append(("image", part.data or ""))
    return out


def pi_turns(ctx: ir.Context, skip: set[str]) -> list[tuple[Any, ...]]:
    turns: list[tuple[Any, ...]] = []
    for cm in ctx.messages:
        if cm.entry_id in skip:
            continue
        m = cm.message
        if type(m) in (ir.UserMessage, ir.ExtensionMessage):
            turns.append(("user", *_pi_parts(m.content)))
        elif type(m) is ir.AssistantMessage:
            content = (ir.Text(text=m.content),) if type(m.content) is str else m.content or ()
            for p in content:
                if type(p) is ir.Text:
                    turns.append(("assistant", p.text or ""))
                elif type(p) is ir.Reasoning:
                    turns.append(("reasoning", p.text or ""))
                elif type(p) is ir.ToolCall:
                    turns.append(("call", p.name or "", p.arguments))
        elif type(m) is ir.ToolResult:
            turns.append(("output", *_pi_parts(m.content)))
        elif type(m) is ir.SummaryMessage:
            turns.append(("summary", m.summary or ""))
        elif type(m) is ir.ShellCommand:
            turns.append(("shell", m.command))
    return turns


def _asf_parts(content: Any) -> list[tuple[Any, ...]]:
    if type(content) is str:
        return [("text", content)]
    out: list[tuple[Any, ...]] = []
    for part in content:
        if part["type"] in ("input_text", "output_text"):
            out.append(("text", part["text"]))
        elif part["type"] == "input_image":
            out.append(("image", part["image_url"].split(",", 1)[1]))
    return out


def asf_turns(
    items: list[dict], sources: list[str], index: dict[str, dict], skip: set[str]
) -> list[tuple[Any, ...]]:
    turns: list[tuple[Any, ...]] = []
    for item, source in zip(items, sources, strict=True):
        if index[source].get("legacy_id") in skip:
            continue
        kind = index[source]["type"]
        t = item["type"]
        if kind in ("compaction", "branch_summary"):
            turns.append(("summary", item["content"][0]["text"]))
        elif t == "message" and item["role"] == "user":
            turns.append(("user", *_asf_parts(item["content"])))
        elif t == "message":
            turns.extend(("assistant", p["text"]) for p in item["content"])
        elif t == "reasoning":
            turns.append(("reasoning", item["summary"][0]["text"] if item["summary"] else ""))
        elif t == "function_call":
            turns.append(("call", item["name"], json.loads(item["arguments"])))
        elif t == "function_call_output":
            turns.append(("output", *_asf_parts(item["output"])))
        elif t == "pi:bash_execution":
            turns.append(("shell", item.get("command")))
    return turns


@pytest.mark.shared
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_round_trip_every_leaf(path: Path) -> None:
    assert_same_context_at_every_leaf(load_pi(path))


def assert_same_context_at_every_leaf(doc: ir.Document) -> None:
    data, report = convert(doc)
    assert validate_asf(data) == []
    asf = load_asf(data)
    tail: dict[str, str] = {}
    for entry in asf.entries:
        tail[entry["legacy_id"]] = entry["id"]
    # A context edit whose replacement is no content (pi then sets the message's content
    # to whatever it holds) has no ASF form (context-edit-not-applied): the messages it
    # targets are left out of the comparison. Replacing edits with content are compared.
    replaced = {
        e.body.target_id
        for e in doc.entries
        if type(e.body) is ir.ContextEdit and not e.body.omit and e.body.replacement is None
    }
    checked = 0
    for leaf in doc.leaves():
        pi_ctx = doc.context(leaf.id)
        ctx = asf.context(tail[leaf.id])
        got = asf_turns(ctx.items, ctx.item_entries, asf.index, replaced)
        assert got == pi_turns(pi_ctx, replaced), leaf.id
        if pi_ctx.model is not None and pi_ctx.model.model is not None:
            assert ctx.settings.get("model") == pi_ctx.model.model
        checked += 1
    assert checked or not doc.leaves()
    assert report.entries_written >= len(doc.entries)


@pytest.mark.shared
@pytest.mark.parametrize("path", CORPUS[:3], ids=lambda p: p.name)
def test_output_is_deterministic_and_keeps_pi_ids(path: Path) -> None:
    doc = load_pi(path)
    first, _ = convert(doc)
    second, _ = convert(doc)
    assert first == second
    legacy = {orjson.loads(raw).get("legacy_id") for raw in first.splitlines()[1:]}
    assert {e.id for e in doc.entries} <= legacy


def test_registered_through_the_hook() -> None:
    from piconv.registry import build_registry

    registry = build_registry()
    converter = registry.get("asf")
    assert converter.mapping_doc == "docs/formats/asf.md"
    assert converter.check is not None


def _convert_lines(tmp_path: Path, lines: list[str]) -> tuple[bytes, Report]:
    import piconv

    src = tmp_path / "s.jsonl"
    header = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-02T03:04:05.123Z","cwd":"/x"}'
    src.write_text("\n".join([header, *lines]) + "\n")
    out = io.BytesIO()
    report = Report(format="asf")
    write_asf(piconv.load(src), out, {"validate": True}, report)
    return out.getvalue(), report


def test_refused_entry_is_a_valid_namespaced_entry(tmp_path: Path) -> None:
    # A non-finite number (1e400: the stdlib reads it as infinity) cannot be written: the entry is
    # refused. It used to keep its type (custom) without the members that type requires.
    data, report = _convert_lines(
        tmp_path,
        [
            '{"type":"custom","id":"a","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z","customType":"x","data":{"v":1e400}}',
        ],
    )
    assert validate_asf(data) == []
    entry = orjson.loads(data.splitlines()[-1])
    assert entry["type"] == "pi:refused" and entry["pi"]["type"] == "custom"
    assert "entry-refused" in {loss["code"] for loss in report.to_json()["losses"]}


def test_user_message_holding_assistant_parts(tmp_path: Path) -> None:
    # Parts a user message should not hold are kept aside verbatim; this used to crash
    # (dataclasses.asdict left the IR's empty extra mapping, which is no JSON value).
    data, _ = _convert_lines(
        tmp_path,
        [
            '{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z","message":{"role":"user",'
            '"content":[{"type":"text","text":"a"},{"type":"toolCall","id":"c","name":"n","arguments":{}},{"type":"thinking","thinking":"t"}]}}',
        ],
    )
    assert validate_asf(data) == []
    kept = orjson.loads(data.splitlines()[-1])["pi"]["message"]["parts"]
    assert [p["part"]["kind"] for p in kept] == ["ToolCall", "Reasoning"]


def test_context_edits_replacing_content_round_trip(tmp_path: Path) -> None:
    # pi replaces the content of the edited message in place, on the branch below the
    # edit; ASF carries it as a pi:context_edit entry the context algorithm honours.
    T = "2026-01-02T03:04:%02d.000Z"
    lines = [
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": T % 1,
            "message": {"role": "user", "content": "original question"},
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "u1",
            "timestamp": T % 2,
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hm"},
                    {"type": "text", "text": "calling"},
                    {"type": "toolCall", "id": "c1", "name": "ls", "arguments": {}},
                ],
                "provider": "p",
                "model": "m",
            },
        },
        {
            "type": "message",
            "id": "r1",
            "parentId": "a1",
            "timestamp": T % 3,
            "message": {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "ls",
                "content": [{"type": "text", "text": "a b"}],
            },
        },
        {
            "type": "custom_message",
            "id": "x1",
            "parentId": "r1",
            "timestamp": T % 4,
            "customType": "n",
            "content": "ext",
            "display": True,
        },
        {
            "type": "context_edit",
            "id": "e1",
            "parentId": "x1",
            "timestamp": T % 5,
            "targetId": "u1",
            "replacement": {"content": [{"type": "text", "text": "edited question"}]},
        },
        {
            "type": "context_edit",
            "id": "e2",
            "parentId": "e1",
            "timestamp": T % 6,
            "targetId": "r1",
            "replacement": {"content": "short output"},
        },
        {
            "type": "context_edit",
            "id": "e3",
            "parentId": "e2",
            "timestamp": T % 7,
            "targetId": "x1",
            "replacement": {"content": "ext edited"},
        },
        {
            "type": "context_edit",
            "id": "e4",
            "parentId": "e3",
            "timestamp": T % 8,
            "targetId": "u1",
            "replacement": {"content": "edited again"},
        },  # the latest edit of a target wins
        {
            "type": "message",
            "id": "u2",
            "parentId": "e4",
            "timestamp": T % 9,
            "message": {"role": "user", "content": "next"},
        },
        {
            "type": "context_edit",
            "id": "e5",
            "parentId": "u2",
            "timestamp": T % 10,
            "targetId": "a1",
            "replacement": {"content": "the turn, summarised"},
        },  # a whole model turn becomes one message
        {
            "type": "message",
            "id": "u3",
            "parentId": "e3",
            "timestamp": T % 11,
            "message": {"role": "user", "content": "a branch"},
        },
    ]
    header = {"type": "session", "version": 3, "id": "s", "timestamp": T % 0, "cwd": "/x"}
    src = tmp_path / "edits.jsonl"
    src.write_bytes(b"\n".join(orjson.dumps(v) for v in [header, *lines]) + b"\n")
    doc = load_pi(src)
    assert_same_context_at_every_leaf(doc)
    data, report = convert(doc)
    assert "context-edit-not-applied" not in report.losses
    asf = load_asf(data)
    leaf = next(e["id"] for e in asf.entries if e["legacy_id"] == "e5")
    items = asf.context(leaf).items
    assert items[0]["content"] == [{"type": "input_text", "text": "edited again"}]
    assert items[1] == {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "the turn, summarised", "annotations": []}],
    }
    assert items[2]["type"] == "function_call_output" and items[2]["output"] == [
        {"type": "input_text", "text": "short output"}
    ]
