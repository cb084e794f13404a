"""The ``chat-request`` reader: an OpenAI chat-completions request body
(``{"model": ..., "messages": [...]}``, one JSON document) read into piconv's IR.

Each message becomes one entry, each the child of the one before, so the request is one
path and its last message the leaf. ``tools`` becomes a system entry declaring them,
first. What the IR does not model stays in the ``extra`` of the object it was on: the
request's other members (``model``, ``temperature``, ``stream``, ...) in the session's, a
message's in the message's. The request's model is also each assistant message's model. The context at any leaf is the messages up to it: the request is what
the model was sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import IO, Any

from piconv import InputError, ir

NAME = "chat-request"
_MODELLED = frozenset(("messages", "tools"))  # the request's other members stay in the session's extra


def detect(head: bytes) -> float:
    """0.9 for a JSON object holding ``model`` (a string) and ``messages`` (a list);
    0.5 when the head is cut before the object ends but names both; 0 otherwise."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith(b"{"):
        return 0.0
    try:
        value = json.loads(text)
    except ValueError:
        return 0.5 if b'"messages"' in text and b'"model"' in text else 0.0
    if (
        isinstance(value, dict)
        and isinstance(value.get("model"), str)
        and isinstance(value.get("messages"), list)
    ):
        return 0.9
    return 0.0


def _kept(value: Mapping[str, Any], modelled: set[str] | frozenset[str]) -> Mapping[str, Any]:
    return {k: v for k, v in value.items() if k not in modelled} or ir.EMPTY


def _part(value: Any) -> ir.Part:
    if isinstance(value, dict) and value.get("type") == "text" and isinstance(value.get("text"), str):
        return ir.Text(value["text"], None, _kept(value, {"type", "text"}))
    if isinstance(value, dict) and value.get("type") == "image_url":
        url = (value.get("image_url") or {}).get("url") if isinstance(value.get("image_url"), dict) else None
        if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
            media, _sep, data = url[len("data:") :].partition(";base64,")
            return ir.Image(data, media or None)
    return ir.UnknownPart(value)


def _content(value: Any) -> ir.Content | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return tuple(_part(p) for p in value)
    return None


def _arguments(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _tool(value: Any) -> ir.ToolSpec:
    function = (
        value.get("function") if isinstance(value, dict) and isinstance(value.get("function"), dict) else {}
    )
    name, description = function.get("name"), function.get("description")
    return ir.ToolSpec(
        name if isinstance(name, str) else None,
        description if isinstance(description, str) else None,
        function.get("parameters"),
        _kept(function, {"name", "description", "parameters"}),
    )


def _message(value: dict[str, Any], model: str | None, tool_names: dict[str, str]) -> ir.Message | None:
    role = value.get("role")
    content = _content(value.get("content"))
    if role in ("system", "developer"):
        return ir.SystemMessage(content, extra=_kept(value, {"content"}))
    if role == "user":
        return ir.UserMessage(content, None, _kept(value, {"role", "content"}))
    if role == "assistant":
        parts: list[ir.Part] = []
        if isinstance(content, str):
            parts.append(ir.Text(content))
        elif content is not None:
            parts.extend(content)
        for call in value.get("tool_calls") or ():
            function = (
                call.get("function")
                if isinstance(call, dict) and isinstance(call.get("function"), dict)
                else {}
            )
            call_id = call.get("id") if isinstance(call, dict) and isinstance(call.get("id"), str) else None
            name = function.get("name") if isinstance(function.get("name"), str) else None
            if call_id is not None and name is not None:
                tool_names[call_id] = name
            parts.append(ir.ToolCall(call_id, name, _arguments(function.get("arguments"))))
        return ir.AssistantMessage(
            tuple(parts),
            ir.ModelRef(None, model) if model else None,
            extra=_kept(value, {"role", "content", "tool_calls"}),
        )
    if role == "tool":
        call_id = value.get("tool_call_id") if isinstance(value.get("tool_call_id"), str) else None
        return ir.ToolResult(
            call_id,
            tool_names.get(call_id or ""),
            content,
            extra=_kept(value, {"role", "content", "tool_call_id"}),
        )
    return None


def _message_lines(text: str, count: int) -> list[int]:
    """The line each of the ``count`` messages starts on, found by decoding the
    ``messages`` array element by element; 1 for each when that cannot be done."""
    decoder = json.JSONDecoder()
    key = text.find('"messages"')
    position = text.find("[", key) + 1 if key >= 0 else 0
    lines: list[int] = []
    try:
        while key >= 0 and len(lines) < count:
            while text[position] in " \t\r\n,":
                position += 1
            lines.append(text.count("\n", 0, position) + 1)
            _value, position = decoder.raw_decode(text, position)
    except (ValueError, IndexError):
        lines = []
    return lines if len(lines) == count else [1] * count


def read(stream: IO[bytes], options: Mapping[str, Any]) -> ir.Document:
    raw = stream.read()
    try:
        text = raw.decode("utf-8-sig")
        value = json.loads(text)
    except ValueError as exc:
        raise InputError(f"not a chat-completions request: not JSON ({exc})") from None
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        raise InputError('not a chat-completions request: no "messages" list')
    model = value.get("model") if isinstance(value.get("model"), str) else None
    issues: list[ir.Issue] = []
    entries: list[ir.Entry] = []
    tool_names: dict[str, str] = {}

    def add(body: ir.Body, line: int) -> None:
        entry_id = f"m{len(entries) + 1}"
        parent = entries[-1].id if entries else None
        entries.append(ir.Entry(entry_id, parent, None, body, ir.Origin(line)))

    if isinstance(value.get("tools"), list):
        add(ir.MessageBody(ir.SystemMessage(tools_added=tuple(_tool(t) for t in value["tools"]))), 1)
    lines = _message_lines(text, len(value["messages"]))
    for index, item in enumerate(value["messages"]):
        line = lines[index]
        if not isinstance(item, dict):
            issues.append(ir.Issue(line, "not-a-message", f"messages[{index}] is not an object; skipped"))
            continue
        message = _message(item, model, tool_names)
        if message is None:
            issues.append(
                ir.Issue(
                    line, "unknown-role", f"messages[{index}] has role {item.get('role')!r}; kept as it is"
                )
            )
            message = ir.UnknownMessage(item)
        add(ir.MessageBody(message), line)
    session = ir.SessionInfo(
        source_format=NAME,
        source_path=options.get("source_path"),
        line=1,
        extra=_kept(value, _MODELLED),
    )
    return ir.Document(
        session,
        tuple(entries),
        entries[-1].id if entries else None,
        tuple(issues),
        lines_read=text.count("\n") + (not text.endswith("\n")),
        context_builder=context,
    )


def context(document: ir.Document, leaf_id: str | None) -> ir.Context:
    """Every message up to the leaf: the request is what the model was sent."""
    messages = tuple(
        ir.ContextMessage(entry.message, entry.id)
        for entry in document.path(leaf_id)
        if entry.message is not None
    )
    model = document.session.extra.get("model")
    ref = ir.ModelRef(None, model) if isinstance(model, str) else None
    return ir.Context(messages, ref, None, leaf_id if leaf_id is not None else document.leaf_id)
