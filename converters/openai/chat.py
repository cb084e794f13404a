"""pi-ai's openai-completions ``convertMessages`` (and the tool part of ``buildParams``).

Input: the LLM message list (see ``llm.py``). Output: the ``messages`` array and the
request ``tools``, exactly as pi 1.6.0 builds them for the target model and compat flags.
"""

from __future__ import annotations

import re
from typing import Any

from piconv import Report
from piconv.converters.common.system import (
    current_system_message,
    current_tools,
    declared_tools,
    render_update,
    system_text,
)
from piconv.ir import Image, Reasoning, SystemMessage, Text, ToolCall, UnknownPart

from . import losses
from .jsutil import js_stringify, js_trim, sanitize_surrogates, short_hash
from .llm import LLMMessage, kept_text
from .tools import convert_tools, grammar_input_properties, grammar_tool_input
from .transform import transform_messages

BRIDGE_TEXT = "I have processed the tool results."
TOOL_IMAGES_TEXT = "Attached image(s) from tool result:"
IMAGE_ONLY_RESULT = "(see attached image)"
EMPTY_RESULT = "(no tool output)"
REASONING_FIELDS = ("reasoning", "reasoning_content", "reasoning_text")

_ID_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def make_id_normalizer(model: dict[str, Any]):
    """pi's ``normalizeToolCallId`` for chat completions."""
    is_openai = model.get("provider") == "openai"

    def normalize(call_id: str) -> str:
        if "|" in call_id:
            # Responses-API ids are "{call_id}|{item_id}", the item id 400+ characters.
            sep = call_id.index("|")
            call = _ID_UNSAFE.sub("_", call_id[:sep])
            item = _ID_UNSAFE.sub("_", call_id[sep + 1 :])
            combined = f"{call}_{item}" if item else call
            if len(combined) <= 40:
                return combined
            digest = short_hash(call_id)[:8]
            return f"{call[: max(1, 40 - len(digest) - 1)]}_{digest}"
        if is_openai and len(call_id) > 40:
            return call_id[:40]
        return call_id

    return normalize


# --------------------------------------------------------------------------- system messages


def resolve_transcript(messages: list[LLMMessage], mid_convo: bool, report: Report) -> list[LLMMessage]:
    """pi's ``resolveTranscript``: without mid-conversation system messages every system
    message is replayed into one leading message."""
    if mid_convo:
        return messages
    systems = [m["message"] for m in messages if m["role"] == "system"]
    rest = [m for m in messages if m["role"] != "system"]
    if len(systems) > 1:
        report.add(losses.SYSTEM_FOLDED, None, count=len(systems) - 1)
    head = current_system_message(systems)
    return ([{"role": "system", "message": head, "line": None}] if head is not None else []) + rest


def resolve_transcript_tools(messages: list[LLMMessage], additions: bool) -> tuple[list[Any], int]:
    """pi's ``resolveTranscriptTools``: (request tools, system messages folded into them)."""
    systems: list[SystemMessage] = [m["message"] for m in messages if m["role"] == "system"]
    if not additions:
        return current_tools(systems), len(systems)
    declared: set[Any] = set()
    last = -1
    for index, message in enumerate(systems):
        if message.tools_removed:
            last = index
        for tool in message.tools_added or ():
            if tool.name in declared:
                last = index
            declared.add(tool.name)
    leading = 1 if messages and messages[0]["role"] == "system" else 0
    folded = max(leading, last + 1)
    return current_tools(systems[:folded]), folded


# --------------------------------------------------------------------------- OpenAI reasoning details


def _is_detail(d: Any) -> bool:
    if type(d) is not dict:
        return False
    if "id" in d and d["id"] is not None and type(d["id"]) is not str:
        return False
    if "format" in d and type(d["format"]) is not str:
        return False
    if "index" in d and type(d["index"]) not in (int, float):
        return False
    t = d.get("type")
    if t == "reasoning.summary":
        return type(d.get("summary")) is str
    if t == "reasoning.encrypted":
        return type(d.get("data")) is str
    if t == "reasoning.text":
        sig = d.get("signature")
        return type(d.get("text")) is str and (sig is None or type(sig) is str)
    return False


def _loads(text: str | None) -> Any:
    if not text:
        return None
    import json

    try:
        return json.loads(text)
    except ValueError:
        return None


def parse_reasoning_details(signature: str | None) -> list[Any] | None:
    parsed = _loads(signature)
    if type(parsed) is list and parsed and all(_is_detail(d) for d in parsed):
        return parsed
    return None


def parse_legacy_encrypted_detail(signature: str | None) -> dict[str, Any] | None:
    parsed = _loads(signature)
    if (
        _is_detail(parsed)
        and parsed["type"] == "reasoning.encrypted"
        and type(parsed.get("id")) is str
        and parsed["id"]
        and parsed["data"]
    ):
        return parsed
    return None


# --------------------------------------------------------------------------- conversion


def _sanitize(text: str, line: int | None, report: Report) -> str:
    clean = sanitize_surrogates(text)
    if clean is not text and clean != text:
        report.add(losses.SURROGATE_REMOVED, line)
    return clean


def _image_url(part: Image) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{part.media_type};base64,{part.data}"}}


def _part_name(part: Any) -> str:
    return part.type if type(part) is UnknownPart else type(part).__name__


def convert_messages(
    messages: list[LLMMessage], model: dict[str, Any], compat: dict[str, Any], report: Report
) -> tuple[list[dict[str, Any]], list[Any]]:
    """The chat ``messages`` and the request tool list (IR tool specs, not yet converted)."""
    mid_convo = bool(compat.get("supportsMidConvoSystemMessages"))
    additions = mid_convo and compat.get("supportsMidConvoToolAdditions") is True
    request_tools, _ = resolve_transcript_tools(messages, additions)
    grammar_props = grammar_input_properties(
        declared_tools(m["message"] for m in messages if m["role"] == "system"),
        bool(compat.get("supportsOpenAIGrammarTools")),
        report,
    )
    normalized = resolve_transcript(messages, mid_convo, report)
    transformed = transform_messages(normalized, model, make_id_normalizer(model), report)
    _, folded = resolve_transcript_tools(normalized, additions)

    supports_images = "image" in (model.get("input") or ())
    instruction_role = (
        "developer" if model.get("reasoning") and compat.get("supportsDeveloperRole") else "system"
    )
    assistant_after_tool = bool(compat.get("requiresAssistantAfterToolResult"))
    empty_content: str | None = (
        "" if assistant_after_tool or compat.get("requiresNonNullAssistantContent") else None
    )
    thinking_as_text = bool(compat.get("requiresThinkingAsText"))
    result_names = bool(compat.get("requiresToolResultName"))
    reasoning_content_required = bool(
        compat.get("requiresReasoningContentOnAssistantMessages") and model.get("reasoning")
    )
    opencode_go = model.get("provider") == "opencode-go"

    params: list[dict[str, Any]] = []
    push = params.append
    last_role: str | None = None
    system_index = 0
    i = 0
    n = len(transformed)
    while i < n:
        msg = transformed[i]
        role = msg["role"]
        line = msg.get("line")
        if assistant_after_tool and last_role == "toolResult" and role == "user":
            report.add(losses.SYNTHETIC_MESSAGE, line)
            push({"role": "assistant", "content": BRIDGE_TEXT})

        if role == "system":
            sysmsg: SystemMessage = msg["message"]
            added = list(sysmsg.tools_added or ()) if system_index >= folded else []
            system_index += 1
            if added:
                # Kimi-style in-place tool declaration (supportsMidConvoToolAdditions)
                push({"role": "system", "tools": convert_tools(added, compat, report)})
            text = system_text(sysmsg) if i == 0 else render_update(sysmsg)
            if text:
                push({"role": instruction_role, "content": _sanitize(text, line, report)})

        elif role == "user":
            content = msg["content"]
            if type(content) is str:
                push({"role": "user", "content": _sanitize(content, line, report)})
            else:
                parts: list[dict[str, Any]] = []
                for item in content:
                    t = type(item)
                    if t is Text:
                        if item.text:
                            parts.append({"type": "text", "text": _sanitize(item.text, line, report)})
                    elif t is Image:
                        parts.append(_image_url(item))
                    else:
                        # pi would send these as a broken image_url; nothing in the chat
                        # format can carry them in a user message.
                        report.add(losses.PART_DROPPED, line, f"{_part_name(item)} in a user message")
                if not parts:
                    i += 1
                    continue
                push({"role": "user", "content": parts})

        elif role == "assistant":
            out: dict[str, Any] = {"role": "assistant", "content": empty_content}
            blocks = msg["content"]
            text_parts = [
                {"type": "text", "text": _sanitize(b.text, line, report)}
                for b in blocks
                if type(b) is Text and b.text and js_trim(b.text)
            ]
            assistant_text = "".join(p["text"] for p in text_parts)
            thinking = [b for b in blocks if type(b) is Reasoning]
            calls = [b for b in blocks if type(b) is ToolCall]
            signed = next(
                (d for d in (parse_reasoning_details(b.signature) for b in thinking) if d is not None), None
            )
            legacy = [d for d in (parse_legacy_encrypted_detail(c.signature) for c in calls) if d is not None]
            preserved = signed if signed is not None else (legacy or None)
            non_empty = [b for b in thinking if b.text and js_trim(b.text)]
            if non_empty:
                if thinking_as_text:
                    joined = "\n\n".join(_sanitize(b.text, line, report) for b in non_empty)
                    out["content"] = [{"type": "text", "text": joined}, *text_parts]
                else:
                    if assistant_text:
                        out["content"] = assistant_text
                    sent = False
                    if not preserved:
                        signature = non_empty[0].signature
                        if opencode_go and signature == "reasoning":
                            signature = "reasoning_content"
                        if signature in REASONING_FIELDS:
                            out[signature] = "\n".join(b.text for b in non_empty)
                            sent = True
                    if not sent and not preserved:
                        report.add(losses.THINKING_NOT_SENT, line, count=len(non_empty))
            elif assistant_text:
                out["content"] = assistant_text
            if calls:
                tool_calls = []
                for call in calls:
                    prop = grammar_props.get(call.name)
                    if prop is not None:
                        tool_calls.append(
                            {
                                "id": call.call_id,
                                "type": "custom",
                                "custom": {
                                    "name": call.name,
                                    "input": _sanitize(
                                        grammar_tool_input(call.name, call.arguments, prop), line, report
                                    ),
                                },
                            }
                        )
                        continue
                    if call.arguments is None and not (call.extra and "arguments" in call.extra):
                        # JSON.stringify(undefined) would drop the member; "{}" is what was meant
                        report.add(losses.CONTENT_REPAIRED, line, "tool call without arguments")
                        arguments = "{}"
                    else:
                        arguments = js_stringify(
                            call.arguments if call.arguments is not None else call.extra.get("arguments")
                        )
                    tool_calls.append(
                        {
                            "id": call.call_id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": arguments},
                        }
                    )
                out["tool_calls"] = tool_calls
            if preserved:
                out["reasoning_details"] = preserved
            if reasoning_content_required and "reasoning_content" not in out:
                out["reasoning_content"] = ""
            content = out["content"]
            if not content and not out.get("tool_calls"):
                report.add(losses.EMPTY_ASSISTANT_DROPPED, line)
                i += 1
                continue
            push(out)

        elif role == "toolResult":
            image_blocks: list[dict[str, Any]] = []
            j = i
            while j < n and transformed[j]["role"] == "toolResult":
                tool_msg = transformed[j]
                tline = tool_msg.get("line")
                tcontent = tool_msg["content"]
                text = "\n".join(b.text or "" for b in tcontent if type(b) is Text)
                has_images = any(type(b) is Image for b in tcontent)
                result_text = text if js_trim(text) else IMAGE_ONLY_RESULT if has_images else EMPTY_RESULT
                if tool_msg.get("isError") and not tool_msg.get("synthetic"):
                    report.add(losses.TOOL_ERROR_FLAG, tline)
                for b in tcontent:
                    if type(b) not in (Text, Image):
                        report.add(losses.PART_DROPPED, tline, f"{_part_name(b)} in a tool result")
                tool_out: dict[str, Any] = {
                    "role": "tool",
                    "content": _sanitize(result_text, tline, report),
                    "tool_call_id": tool_msg["toolCallId"],
                }
                if result_names:
                    name = tool_msg.get("toolName")
                    if name is None:  # no string: its JSON text, reported
                        name = kept_text(tool_msg.get("extra"), "toolName", tline, report)
                    if name:
                        tool_out["name"] = name
                push(tool_out)
                if has_images and supports_images:
                    report.add(losses.TOOL_IMAGES_MOVED, tline)
                    image_blocks.extend(_image_url(b) for b in tcontent if type(b) is Image)
                j += 1
            i = j
            if image_blocks:
                if assistant_after_tool:
                    report.add(losses.SYNTHETIC_MESSAGE, None)
                    push({"role": "assistant", "content": BRIDGE_TEXT})
                push({"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_TEXT}, *image_blocks]})
                last_role = "user"
            else:
                last_role = "toolResult"
            continue
        last_role = role
        i += 1
    return params, request_tools


def has_tool_history(messages: list[LLMMessage]) -> bool:
    for msg in messages:
        if msg["role"] == "toolResult":
            return True
        if msg["role"] == "assistant" and any(type(b) is ToolCall for b in msg["content"]):
            return True
    return False


# --------------------------------------------------------------------------- Anthropic cache control


def _cache_control(compat: dict[str, Any]) -> dict[str, Any] | None:
    # pi's default cache retention is "short": no ttl
    if compat.get("cacheControlFormat") != "anthropic":
        return None
    return {"type": "ephemeral"}


def _mark_text(message: dict[str, Any], cache: dict[str, Any]) -> bool:
    content = message.get("content")
    if type(content) is str:
        if not content:
            return False
        message["content"] = [{"type": "text", "text": content, "cache_control": cache}]
        return True
    if type(content) is not list:
        return False
    for part in reversed(content):
        if isinstance(part, dict) and part.get("type") == "text":
            part["cache_control"] = cache
            return True
    return False


def apply_cache_control(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, compat: dict[str, Any]
) -> None:
    """pi's ``applyAnthropicCacheControl`` (OpenRouter's anthropic/* models)."""
    cache = _cache_control(compat)
    if cache is None:
        return
    for message in messages:
        if message["role"] in ("system", "developer"):
            _mark_text(message, cache)
            break
    if tools:
        tools[-1]["cache_control"] = cache
    for message in reversed(messages):
        if message["role"] in ("user", "assistant", "tool") and _mark_text(message, dict(cache)):
            break


def build_request(
    llm: list[LLMMessage], model: dict[str, Any], compat: dict[str, Any], report: Report
) -> dict[str, Any]:
    """The request body: ``model``, ``messages`` and (when there are any) ``tools``."""
    messages, tool_specs = convert_messages(llm, model, compat, report)
    body: dict[str, Any] = {"model": model.get("id"), "messages": messages}
    tools: list[dict[str, Any]] | None = None
    if tool_specs:
        tools = convert_tools(tool_specs, compat, report)
        body["tools"] = tools
        if compat.get("zaiToolStream"):
            body["tool_stream"] = True
    elif compat.get("requiresToolsWithToolHistory") and has_tool_history(llm):
        tools = body["tools"] = []
    apply_cache_control(messages, tools, compat)
    return body
