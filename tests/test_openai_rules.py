"""The OpenAI converter's rules on hand-built IR: pi's texts, id normalisation, orphaned
calls, dropped turns, the loss report codes, system-message replay, JS semantics."""

from __future__ import annotations

import io
from typing import Any

import orjson
import pytest
from piconv import Report, UsageError
from piconv.converters.common.system import (
    current_prompt,
    current_system_message,
    current_tools,
    render_update,
)
from piconv.converters.openai.chat import build_request, make_id_normalizer
from piconv.converters.openai.compat import apply_overrides, get_compat
from piconv.converters.openai.jsutil import js_number, js_stringify, sanitize_surrogates, short_hash
from piconv.converters.openai.llm import bash_execution_to_text, convert_to_llm
from piconv.converters.openai.models import DEFAULT_MODEL, resolve_target
from piconv.ir import (
    AssistantMessage,
    Context,
    ContextMessage,
    ExtensionMessage,
    Image,
    ModelRef,
    Reasoning,
    ShellCommand,
    SummaryMessage,
    SystemMessage,
    Text,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
)

GPT4O = ModelRef(provider="openai", model="gpt-4o", api="openai-completions")
OTHER = ModelRef(provider="anthropic", model="claude", api="anthropic-messages")


def request(
    *messages: Any, model: dict[str, Any] | None = None, compat: list[str] = ()
) -> tuple[dict, Report]:
    report = Report("openai")
    target = apply_overrides(dict(model or DEFAULT_MODEL), list(compat))
    ctx = Context(tuple(ContextMessage(m, None) for m in messages), None, None, None)
    llm = convert_to_llm(ctx, report, lambda _id: None)
    return build_request(llm, target, get_compat(target), report), report


def codes(report: Report) -> dict[str, int]:
    return {code: item.count for code, item in report.losses.items()}


# --------------------------------------------------------------------------- JavaScript semantics


# Values printed by Node 22 (String(x), JSON.stringify, pi-ai's shortHash).
@pytest.mark.parametrize(
    "value,js",
    [
        (1.0, "1"),
        (1e16, "10000000000000000"),
        (1.5e22, "1.5e+22"),
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (1.23e-6, "0.00000123"),
        (-0.0, "0"),
        (2**60, "1152921504606847000"),
        (100.5, "100.5"),
        (5e-324, "5e-324"),
    ],
)
def test_js_number(value: float, js: str) -> None:
    assert js_number(value) == js


def test_js_stringify_key_order_and_escapes() -> None:
    value = {"b": 1, "2": [1.0, 'x\u2028\x1f"'], "1": None, "01": True}
    assert js_stringify(value) == '{"1":null,"2":[1,"x\u2028\\u001f\\""],"b":1,"01":true}'


def _exact_stringify(value: Any) -> str:
    from piconv.converters.openai import jsutil

    parts: list[str] = []
    jsutil._write(value, parts)
    return "".join(parts)


def test_js_stringify_through_orjson_equals_the_exact_path() -> None:
    from piconv.converters.openai.jsutil import _orjson_spells_it

    every_char = "".join(chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF) + "\U0001f600\U0010ffff"
    values: list[Any] = [
        every_char,
        {
            "path": "a/b.ts",
            "n": 2**53,
            "m": -(2**53),
            "ok": True,
            "no": False,
            "none": None,
            "list": [1, "x", [], {}],
        },
        {"x": {"y": [{"z": "\u2028\u2029\x7f\x00"}]}},
        (1, "tuple"),
        [],
        {},
        "",
    ]
    for value in values:
        assert _orjson_spells_it(value)
        assert js_stringify(value) == _exact_stringify(value)
    # the exact path only: floats, unsafe integers, digit keys, lone surrogates, other keys
    for value in (1.0, [0.1], 2**53 + 1, {"1": 1, "a": 2}, {"\u0661": 1}, {1: 2}, "a\ud800", {"a": "\udc00"}):
        assert js_stringify(value) == _exact_stringify(value)
    assert not _orjson_spells_it({"1": 1}) and not _orjson_spells_it(1.5) and not _orjson_spells_it(2**60)


def test_short_hash_matches_pi() -> None:
    assert short_hash("call_abc|fc_" + "x" * 300) == "vd39skbdrp34"
    assert short_hash("héllo😀") == "1olj6nu1frhbfw"


def test_sanitize_surrogates() -> None:
    assert sanitize_surrogates("a\ud800b") == "ab"
    assert sanitize_surrogates("ok 😀") == "ok 😀"


# --------------------------------------------------------------------------- convertToLlm texts


def test_shell_command_text() -> None:
    cmd = ShellCommand(command="ls", output="a\nb", exit_code=2, truncated=True, full_output_path="/tmp/o")
    assert bash_execution_to_text(cmd) == (
        "Ran `ls`\n```\na\nb\n```\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/o]"
    )
    assert (
        bash_execution_to_text(ShellCommand(command="x", cancelled=True))
        == "Ran `x`\n(no output)\n\n(command cancelled)"
    )


def test_summaries_hidden_extensions_and_excluded_shell() -> None:
    body, report = request(
        SummaryMessage(kind="compaction", summary="S"),
        SummaryMessage(kind="branch", summary="B"),
        ExtensionMessage(extension_type="note", content="hidden", display=False),
        ShellCommand(command="secret", exclude_from_context=True),
    )
    texts = [m["content"][0]["text"] for m in body["messages"]]
    assert texts == [
        "The conversation history before this point was compacted into the following summary:\n\n<summary>\nS\n</summary>",
        "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nB</summary>",
        "hidden",
    ]
    assert codes(report) == {"openai:hidden-extension-sent": 1}


# --------------------------------------------------------------------------- transformMessages


def test_cross_model_thinking_dropped_and_ids_normalised() -> None:
    long_id = "call_1|" + "fc_" + "A+/=" * 120
    body, report = request(
        UserMessage(content="go"),
        AssistantMessage(
            content=(
                Reasoning(text="hmm", signature="sig"),
                ToolCall(call_id=long_id, name="ls", arguments={"p": 1.0}),
            ),
            model=OTHER,
            stop_reason="tool_use",
        ),
        ToolResult(call_id=long_id, tool_name="ls", content=(Text("out"),), is_error=True),
    )
    assistant, tool = body["messages"][1], body["messages"][2]
    new_id = make_id_normalizer(DEFAULT_MODEL)(long_id)
    assert len(new_id) <= 40 and new_id.startswith("call_1_")
    assert assistant == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": new_id, "type": "function", "function": {"name": "ls", "arguments": '{"p":1}'}}
        ],
    }
    assert tool == {"role": "tool", "content": "out", "tool_call_id": new_id}
    assert codes(report) == {
        "openai:thinking-dropped": 1,
        "openai:ids-rewritten": 1,
        "openai:tool-error-flag": 1,
    }


def test_openai_ids_truncated_to_40() -> None:
    normalize = make_id_normalizer(DEFAULT_MODEL)
    assert normalize("x" * 50) == "x" * 40
    assert make_id_normalizer({"provider": "groq"})("x" * 50) == "x" * 50
    assert normalize("call_a|") == "call_a"


def test_orphaned_call_gets_synthetic_result_and_errored_turn_is_dropped() -> None:
    body, report = request(
        UserMessage(content="go"),
        AssistantMessage(
            content=(ToolCall(call_id="c1", name="ls", arguments={}),), model=GPT4O, stop_reason="tool_use"
        ),
        AssistantMessage(content=(Text("partial"),), model=GPT4O, stop_reason="error"),
        UserMessage(content="again"),
    )
    roles = [(m["role"], m.get("content")) for m in body["messages"]]
    assert roles == [("user", "go"), ("assistant", None), ("tool", "No result provided"), ("user", "again")]
    assert codes(report) == {"openai:tool-result-synthesized": 1, "openai:errored-turn-dropped": 1}


def test_images_without_vision_and_after_tool_results() -> None:
    png = Image(data="AAAA", media_type="image/png")
    msgs = (
        UserMessage(content=(Text("see"), png, png)),
        AssistantMessage(
            content=(ToolCall(call_id="c", name="shot", arguments={}),), model=GPT4O, stop_reason="tool_use"
        ),
        ToolResult(call_id="c", tool_name="shot", content=(png,)),
    )
    body, report = request(*msgs)
    assert body["messages"][2] == {"role": "tool", "content": "(see attached image)", "tool_call_id": "c"}
    assert body["messages"][3]["content"][0] == {
        "type": "text",
        "text": "Attached image(s) from tool result:",
    }
    assert codes(report) == {"openai:tool-images-moved": 1}
    body, report = request(*msgs, compat=["input=text"])
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "see"},
        {"type": "text", "text": "(image omitted: model does not support images)"},
    ]
    assert body["messages"][2]["content"] == "(tool image omitted: model does not support images)"
    assert codes(report) == {"openai:image-replaced": 3}


# --------------------------------------------------------------------------- compat flags


def test_compat_flags_shape_the_messages() -> None:
    same = ModelRef(provider="openai", model="o9", api="openai-completions")
    model = {**DEFAULT_MODEL, "id": "o9", "reasoning": True}
    msgs = (
        SystemMessage(content="Be brief.", timestamp=1),
        UserMessage(content="q"),
        AssistantMessage(
            content=(Reasoning(text="think", signature="reasoning_content"), Text("a")),
            model=same,
            stop_reason="stop",
        ),
    )
    body, _ = request(*msgs, model=model)
    assert body["messages"][0] == {"role": "developer", "content": "Be brief."}
    assert body["messages"][2] == {"role": "assistant", "content": "a", "reasoning_content": "think"}
    body, _ = request(
        *msgs, model=model, compat=["requiresThinkingAsText=true", "supportsDeveloperRole=false"]
    )
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][2]["content"] == [
        {"type": "text", "text": "think"},
        {"type": "text", "text": "a"},
    ]


def test_unknown_compat_key_and_bad_target_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        apply_overrides(DEFAULT_MODEL, ["noSuchFlag=true"])
    with pytest.raises(UsageError):
        resolve_target("gpt-4o")
    model, known = resolve_target("acme/unknown-model")
    assert not known and model["provider"] == "acme"
    model, known = resolve_target("openrouter/anthropic/claude-fable-5")
    assert known and model["id"] == "anthropic/claude-fable-5" and model["api"] == "openai-completions"


# --------------------------------------------------------------------------- system replay


def test_system_replay_sections_and_tools() -> None:
    read, bash = ToolSpec(name="read", parameters={"type": "object"}), ToolSpec(name="bash", description="sh")
    first = SystemMessage(
        content="Base.", sections={"a": "A", "b": "B"}, tools_added=(read, bash), timestamp=5
    )
    second = SystemMessage(
        sections={"a": None, "c": "C"}, tools_removed=(ToolSpec(name="read"),), timestamp=9
    )
    third = SystemMessage(content="More.", tools_added=(read,))
    state = current_system_message([first, second, third])
    assert state is not None and state.timestamp == 5
    assert current_prompt([first, second, third]) == "Base.\n\nMore.\n\nB\n\nC"
    assert [t.name for t in current_tools([first, second, third])] == ["bash", "read"]
    assert (
        render_update(second)
        == 'Removed system prompt section "a".\n\nUpdated system prompt section "c":\n\nC'
    )
    body, report = request(first, UserMessage(content="hi"), second, third)
    assert body["messages"][0] == {"role": "system", "content": "Base.\n\nMore.\n\nB\n\nC"}
    assert [t["function"]["name"] for t in body["tools"]] == ["bash", "read"]
    assert codes(report) == {"openai:system-folded": 2}


def test_mid_conversation_system_messages_and_tool_additions() -> None:
    read = ToolSpec(name="read", parameters={"type": "object"})
    grep = ToolSpec(name="grep", parameters={"type": "object"})
    body, _ = request(
        SystemMessage(content="Base.", tools_added=(read,), timestamp=1),
        UserMessage(content="hi"),
        SystemMessage(sections={"x": "X"}, tools_added=(grep,)),
        compat=["supportsMidConvoSystemMessages=true", "supportsMidConvoToolAdditions=true"],
    )
    assert [t["function"]["name"] for t in body["tools"]] == ["read"]
    assert body["messages"][2] == {
        "role": "system",
        "tools": [{"type": "function", "function": {"name": "grep", "parameters": {"type": "object"}}}],
    }
    assert body["messages"][3] == {"role": "system", "content": 'Updated system prompt section "x":\n\nX'}


def test_cli_writes_jsonl_for_all_leaves(tmp_path: Any) -> None:
    import piconv
    from conftest import session_bytes  # type: ignore[import-not-found]

    msg = {"role": "user", "content": "hi", "timestamp": 1}
    data = session_bytes(
        {"type": "message", "id": "a", "parentId": None, "timestamp": "2026-01-01T00:00:00Z", "message": msg},
        {
            "type": "message",
            "id": "b",
            "parentId": "a",
            "timestamp": "2026-01-01T00:00:01Z",
            "message": {**msg, "content": "left"},
        },
        {
            "type": "message",
            "id": "c",
            "parentId": "a",
            "timestamp": "2026-01-01T00:00:02Z",
            "message": {**msg, "content": "right"},
        },
    )
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    out = io.BytesIO()
    piconv.convert(str(path), "openai", out, {"all_leaves": True})
    lines = [orjson.loads(line) for line in out.getvalue().splitlines()]
    assert [req["messages"][-1]["content"] for req in lines] == ["left", "right"]
