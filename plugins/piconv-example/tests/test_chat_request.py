"""The chat-request reader: a chat-completions request read into the IR, through
piconv's public API only."""

from __future__ import annotations

import io
import json
from pathlib import Path

import piconv
import piconv_turns
import pytest
from piconv import ir
from piconv.registry import build_registry
from piconv_turns import chat_request

REQUEST = {
    "model": "gpt-4o",
    "temperature": 0.2,
    "tools": [
        {
            "type": "function",
            "function": {"name": "lookup", "description": "Look up", "parameters": {"type": "object"}},
        }
    ],
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "What is 2+2?"}], "name": "ann"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "2+2"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "4"},
        {"role": "assistant", "content": "4."},
    ],
}


def _bytes(value: object, indent: int | None = 2) -> bytes:
    return json.dumps(value, indent=indent).encode()


def _read(data: bytes) -> ir.Document:
    return chat_request.read(io.BytesIO(data), {"source_path": None})


def test_detect_claims_a_request_and_nothing_else() -> None:
    assert chat_request.detect(_bytes(REQUEST)) == 0.9
    assert chat_request.detect(_bytes(REQUEST)[:40]) == 0.0  # cut before "messages"
    assert chat_request.detect(_bytes(REQUEST, None)[:-20]) == 0.5  # cut, names both
    pi_line = (
        b'{"type":"session","version":3,"id":"x"}\n{"type":"message","id":"a","message":{"role":"user"}}\n'
    )
    assert chat_request.detect(pi_line) == 0.0
    assert chat_request.detect(b"[1, 2]") == 0.0
    assert chat_request.detect(b'{"model": "m", "messages": "no list"}') == 0.0


def test_messages_become_one_path_of_entries() -> None:
    doc = _read(_bytes(REQUEST))
    assert doc.issues == ()
    kinds = [type(e.message).__name__ for e in doc.entries]
    assert kinds == [
        "SystemMessage",
        "SystemMessage",
        "UserMessage",
        "AssistantMessage",
        "ToolResult",
        "AssistantMessage",
    ]
    assert [e.parent_id for e in doc.entries] == [None, "m1", "m2", "m3", "m4", "m5"] and doc.leaf_id == "m6"
    assert doc.entries[0].message.tools_added[0].name == "lookup"
    user = doc.get("m3").message
    assert user.content == (ir.Text("What is 2+2?"),) and user.extra == {"name": "ann"}
    call = doc.get("m4").message.content[0]
    assert (call.call_id, call.name, call.arguments) == ("c1", "lookup", {"q": "2+2"})
    assert doc.get("m5").message.tool_name == "lookup"
    assert doc.session.extra == {"model": "gpt-4o", "temperature": 0.2}
    # a pretty-printed request: each message's problems and origin name its line
    text = _bytes(REQUEST).decode().splitlines()
    assert (
        text[doc.get("m3").origin.line - 1] == "    {" and '"role": "user"' in text[doc.get("m3").origin.line]
    )


def test_the_context_is_the_request() -> None:
    doc = _read(_bytes(REQUEST))
    ctx = chat_request.context(doc, None)
    assert [m.entry_id for m in ctx.messages] == ["m1", "m2", "m3", "m4", "m5", "m6"]
    assert ctx.model == ir.ModelRef(None, "gpt-4o")
    assert [m.entry_id for m in chat_request.context(doc, "m4").messages][-1] == "m4"


def test_bad_messages_are_problems_with_their_line() -> None:
    lines = b'{"model": "m", "messages": [\n{"role": "user", "content": "hi"},\n42,\n{"role": "robot", "content": "beep"}\n]}\n'
    doc = _read(lines)
    assert [(i.line, i.code) for i in doc.issues] == [(3, "not-a-message"), (4, "unknown-role")]
    assert (
        type(doc.entries[-1].message) is ir.UnknownMessage
        and doc.entries[-1].message.value["role"] == "robot"
    )


@pytest.mark.parametrize("data", [b"not json", b"[1]", b'{"model": "m"}'])
def test_not_a_request_is_an_input_error(data: bytes) -> None:
    with pytest.raises(piconv.InputError, match="not a chat-completions request"):
        _read(data)


def test_registered_and_detected_through_piconv(tmp_path: Path) -> None:
    registry = build_registry(extra_plugins=(piconv_turns,), third_party=False)
    assert registry.failures == []
    reader = registry.reader("chat-request")
    assert reader.extensions == (".json",) and reader.read is chat_request.read
    path = tmp_path / "request.json"
    path.write_bytes(_bytes(REQUEST))
    with path.open("rb") as stream:
        doc = reader.read(stream, {"source_path": str(path)})
    assert doc.session.source_path == str(path)
    for fmt in ("markdown", "html", "openai", "turns"):
        if fmt == "turns":
            out = io.BytesIO()
            piconv_turns.write_turns(doc, out, {}, piconv.Report(format="turns"))
            assert b"assistant  4." in out.getvalue()
            continue
        out = io.BytesIO()
        piconv.convert(doc, fmt, out)
        assert out.getvalue()
    request = json.loads(_convert(doc, "openai"))
    assert [m["role"] for m in request["messages"]] == ["system", "user", "assistant", "tool", "assistant"]
    assert request["tools"][0]["function"]["name"] == "lookup"


def _convert(doc: ir.Document, fmt: str) -> bytes:
    out = io.BytesIO()
    piconv.convert(doc, fmt, out)
    return out.getvalue()


def test_a_request_becomes_a_pi_session_with_its_context() -> None:
    """``--to pi`` from a plugin's reader: a pi session whose context, by pi's own rule, is
    the request's, what pi cannot hold reported."""
    doc = _read(_bytes(REQUEST))
    object.__setattr__(doc, "context_builder", chat_request.context)  # as piconv.load gives it
    out = io.BytesIO()
    report = piconv.convert(doc, "pi", out)
    assert "context-differs" not in report.losses
    assert "member-not-kept" in report.losses  # the user's "name", the request's "temperature"
    written = piconv.load(out.getvalue(), reader="pi")
    assert written.session.source_version == 3 and len(written.leaves()) == 1
    theirs, ours = doc.context(), written.context()
    assert [m.entry_id for m in ours.messages] == [m.entry_id for m in theirs.messages]
    assert [m.message.role for m in ours.messages] == [m.message.role for m in theirs.messages]
    assert ours.model is not None and ours.model.model == "gpt-4o"
