"""pi's JSON objects ↔ IR objects, in both directions.

Each pi object kind is described once by a field table (pi key → IR field and the JSON
type the IR field accepts); reading and writing both walk the same table, so the two
directions cannot drift apart. Whatever a table does not name, or names with a value
of another type (or an explicit ``null``), goes to the object's ``extra`` untouched and
comes back out verbatim.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .ir import (
    EMPTY,
    AssistantMessage,
    Content,
    Cost,
    ExtensionMessage,
    Image,
    Message,
    ModelRef,
    Part,
    Reasoning,
    ShellCommand,
    SummaryMessage,
    SystemMessage,
    Text,
    ToolCall,
    ToolResult,
    ToolSpec,
    UnknownMessage,
    UnknownPart,
    Usage,
    UserMessage,
)

JSONDict = dict[str, Any]


def _is_str(v: Any) -> bool:
    return type(v) is str


def _is_bool(v: Any) -> bool:
    return type(v) is bool


def _is_num(v: Any) -> bool:
    return (type(v) is int or type(v) is float) and v == v  # NaN cannot come from JSON anyway


def _is_dict(v: Any) -> bool:
    return type(v) is dict


def _is_any(v: Any) -> bool:
    return True


Loader = Callable[[Any], Any]
Dumper = Callable[[Any], Any]
# pi key -> (IR field, accepts, load, dump)
Table = dict[str, tuple[str, Callable[[Any], bool], Loader | None, Dumper | None]]


def _split(raw: JSONDict, table: Table, skip: str | None = None) -> tuple[JSONDict, JSONDict]:
    fields: JSONDict = {}
    extra: JSONDict | None = None
    for key, value in raw.items():
        spec = table.get(key)
        if spec is not None and value is not None and spec[1](value):
            load = spec[2]
            fields[spec[0]] = load(value) if load is not None else value
        elif key != skip:
            if extra is None:
                extra = {}
            extra[key] = value
    if extra:
        fields["extra"] = extra
    return fields, extra or {}


def _join(obj: Any, table: Table, out: JSONDict) -> JSONDict:
    for key, (name, _accepts, _load, dump) in table.items():
        value = getattr(obj, name)
        if value is not None:
            out[key] = dump(value) if dump is not None else value
    extra = obj.extra
    if extra:
        out.update(extra)
    return out


# --------------------------------------------------------------------------- usage


COST: Table = {
    "input": ("input", _is_num, None, None),
    "output": ("output", _is_num, None, None),
    "cacheRead": ("cache_read", _is_num, None, None),
    "cacheWrite": ("cache_write", _is_num, None, None),
    "total": ("total", _is_num, None, None),
}


def load_cost(raw: JSONDict) -> Cost:
    return Cost(**_split(raw, COST)[0])


def dump_cost(cost: Cost) -> JSONDict:
    return _join(cost, COST, {})


USAGE: Table = {
    "input": ("input_tokens", _is_num, None, None),
    "output": ("output_tokens", _is_num, None, None),
    "cacheRead": ("cache_read_tokens", _is_num, None, None),
    "cacheWrite": ("cache_write_tokens", _is_num, None, None),
    "cacheWrite1h": ("cache_write_1h_tokens", _is_num, None, None),
    "reasoning": ("reasoning_tokens", _is_num, None, None),
    "totalTokens": ("total_tokens", _is_num, None, None),
    "cost": ("cost", _is_dict, load_cost, dump_cost),
}


def load_usage(raw: JSONDict) -> Usage:
    return Usage(**_split(raw, USAGE)[0])


def dump_usage(usage: Usage) -> JSONDict:
    return _join(usage, USAGE, {})


# --------------------------------------------------------------------------- content parts

TEXT: Table = {
    "text": ("text", _is_str, None, None),
    "textSignature": ("signature", _is_str, None, None),
}
IMAGE: Table = {
    "data": ("data", _is_str, None, None),
    "mimeType": ("media_type", _is_str, None, None),
}
THINKING: Table = {
    "thinking": ("text", _is_str, None, None),
    "thinkingSignature": ("signature", _is_str, None, None),
    "redacted": ("redacted", _is_bool, None, None),
}
TOOL_CALL: Table = {
    "id": ("call_id", _is_str, None, None),
    "name": ("name", _is_str, None, None),
    "arguments": ("arguments", _is_any, None, None),
    "thoughtSignature": ("signature", _is_str, None, None),
    "namespace": ("namespace", _is_str, None, None),
}
PART_KINDS: dict[str, tuple[type, Table]] = {
    "text": (Text, TEXT),
    "image": (Image, IMAGE),
    "thinking": (Reasoning, THINKING),
    "toolCall": (ToolCall, TOOL_CALL),
}
PART_TYPE_NAMES: dict[type, str] = {cls: name for name, (cls, _t) in PART_KINDS.items()}


def load_part(raw: Any) -> Part:
    if type(raw) is dict:
        kind = PART_KINDS.get(raw.get("type"))  # type: ignore[arg-type]
        if kind is not None:
            cls, table = kind
            # The text fast path: by far the most common part.
            if cls is Text and len(raw) == 2 and type(raw.get("text")) is str:
                return Text(raw["text"])
            return cls(**_split(raw, table, skip="type")[0])
    return UnknownPart(raw)


def dump_part(part: Part) -> Any:
    if type(part) is UnknownPart:
        return part.value
    cls = type(part)
    name = PART_TYPE_NAMES[cls]
    return _join(part, PART_KINDS[name][1], {"type": name})


def load_content(raw: Any) -> Content:
    if type(raw) is str:
        return raw
    return tuple(load_part(p) for p in raw)


def dump_content(content: Content) -> Any:
    if type(content) is str:
        return content
    return [dump_part(p) for p in content]


def _is_content(v: Any) -> bool:
    return type(v) is str or type(v) is list


# --------------------------------------------------------------------------- tools

TOOL_SPEC: Table = {
    "name": ("name", _is_str, None, None),
    "description": ("description", _is_str, None, None),
    "parameters": ("parameters", _is_any, None, None),
}


def _is_tool_list(v: Any) -> bool:
    # A list holding anything but objects stays raw in ``extra`` as a whole.
    return type(v) is list and all(type(t) is dict for t in v)


def load_tool(raw: JSONDict) -> ToolSpec:
    return ToolSpec(**_split(raw, TOOL_SPEC)[0])


def dump_tool(tool: ToolSpec) -> JSONDict:
    return _join(tool, TOOL_SPEC, {})


def load_tools(raw: list[JSONDict]) -> tuple[ToolSpec, ...]:
    return tuple(load_tool(t) for t in raw)


def dump_tools(tools: tuple[ToolSpec, ...]) -> list[JSONDict]:
    return [dump_tool(t) for t in tools]


# --------------------------------------------------------------------------- messages

_TIMESTAMP = ("timestamp", _is_num, None, None)

SYSTEM: Table = {
    "content": ("content", _is_content, load_content, dump_content),
    "sections": ("sections", _is_dict, None, None),
    "toolsAdded": ("tools_added", _is_tool_list, load_tools, dump_tools),
    "toolsRemoved": ("tools_removed", _is_tool_list, load_tools, dump_tools),
    "timestamp": _TIMESTAMP,
}
USER: Table = {
    "content": ("content", _is_content, load_content, dump_content),
    "timestamp": _TIMESTAMP,
}
STOP_REASONS = {"toolUse": "tool_use"}
STOP_REASONS_BACK = {v: k for k, v in STOP_REASONS.items()}


def _load_stop(v: str) -> str:
    return STOP_REASONS.get(v, v)


def _dump_stop(v: str) -> str:
    return STOP_REASONS_BACK.get(v, v)


ASSISTANT: Table = {
    "content": ("content", _is_content, load_content, dump_content),
    "usage": ("usage", _is_dict, load_usage, dump_usage),
    "stopReason": ("stop_reason", _is_str, _load_stop, _dump_stop),
    "errorMessage": ("error_message", _is_str, None, None),
    "responseId": ("response_id", _is_str, None, None),
    "responseModel": ("response_model", _is_str, None, None),
    "thinkingLevel": ("reasoning_level", _is_str, None, None),
    "timestamp": _TIMESTAMP,
}
_ASSISTANT_MODEL = {"api": "api", "provider": "provider", "model": "model"}
TOOL_RESULT: Table = {
    "toolCallId": ("call_id", _is_str, None, None),
    "toolName": ("tool_name", _is_str, None, None),
    "content": ("content", _is_content, load_content, dump_content),
    "isError": ("is_error", _is_bool, None, None),
    "details": ("details", _is_any, None, None),
    "usage": ("usage", _is_dict, load_usage, dump_usage),
    "timestamp": _TIMESTAMP,
}
SHELL: Table = {
    "command": ("command", _is_str, None, None),
    "output": ("output", _is_str, None, None),
    "exitCode": ("exit_code", _is_num, None, None),
    "cancelled": ("cancelled", _is_bool, None, None),
    "truncated": ("truncated", _is_bool, None, None),
    "fullOutputPath": ("full_output_path", _is_str, None, None),
    "excludeFromContext": ("exclude_from_context", _is_bool, None, None),
    "timestamp": _TIMESTAMP,
}
EXTENSION: Table = {
    "customType": ("extension_type", _is_str, None, None),
    "content": ("content", _is_content, load_content, dump_content),
    "display": ("display", _is_bool, None, None),
    "details": ("details", _is_any, None, None),
    "timestamp": _TIMESTAMP,
}
SUMMARY: Table = {
    "summary": ("summary", _is_str, None, None),
    "tokensBefore": ("tokens_before", _is_num, None, None),
    "fromId": ("from_id", _is_str, None, None),
    "timestamp": _TIMESTAMP,
}

ROLE_TABLES: dict[str, tuple[type, Table]] = {
    "system": (SystemMessage, SYSTEM),
    "user": (UserMessage, USER),
    "assistant": (AssistantMessage, ASSISTANT),
    "toolResult": (ToolResult, TOOL_RESULT),
    "bashExecution": (ShellCommand, SHELL),
    "custom": (ExtensionMessage, EXTENSION),
    "hookMessage": (ExtensionMessage, EXTENSION),  # the v2 name of "custom"
}
ROLE_NAMES: dict[type, str] = {
    SystemMessage: "system",
    UserMessage: "user",
    AssistantMessage: "assistant",
    ToolResult: "toolResult",
    ShellCommand: "bashExecution",
    ExtensionMessage: "custom",
}
SUMMARY_ROLES = {"compactionSummary": "compaction", "branchSummary": "branch"}
SUMMARY_ROLES_BACK = {v: k for k, v in SUMMARY_ROLES.items()}


def load_message(raw: JSONDict) -> Message:
    """An IR message from a pi message object (any role; unknown roles kept verbatim)."""
    role = raw.get("role")
    spec = ROLE_TABLES.get(role) if type(role) is str else None
    if spec is not None:
        cls, table = spec
        fields, extra = _split(raw, table, skip="role")
        if cls is AssistantMessage:
            model = {}
            for key, name in _ASSISTANT_MODEL.items():
                value = extra.get(key)
                if type(value) is str:
                    model[name] = value
                    del extra[key]
            if model:
                fields["model"] = ModelRef(**model)
            if not extra:
                fields.pop("extra", None)
        return cls(**fields)
    kind = SUMMARY_ROLES.get(role) if type(role) is str else None
    if kind is not None:
        fields, _ = _split(raw, SUMMARY, skip="role")
        return SummaryMessage(kind=kind, **fields)
    return UnknownMessage(raw)


def dump_message(message: Message, role: str | None = None) -> Any:
    """The pi message object for an IR message. ``role`` overrides the role name
    (``hookMessage`` for messages read from a version 2 file)."""
    cls = type(message)
    if cls is UnknownMessage:
        return message.value  # type: ignore[union-attr]
    if cls is SummaryMessage:
        out: JSONDict = {"role": role or SUMMARY_ROLES_BACK.get(message.kind, message.kind)}  # type: ignore[union-attr]
        return _join(message, SUMMARY, out)
    name = role or ROLE_NAMES[cls]
    out = {"role": name}
    table = ROLE_TABLES[name][1] if name in ROLE_TABLES else ROLE_TABLES[ROLE_NAMES[cls]][1]
    if cls is AssistantMessage:
        model = message.model  # type: ignore[union-attr]
        if model is not None:
            for key, attr in _ASSISTANT_MODEL.items():
                value = getattr(model, attr)
                if value is not None:
                    out[key] = value
    return _join(message, table, out)


def with_content(message: Message, content: Any) -> Message:
    """A copy of ``message`` whose content is the pi JSON value ``content`` (typed when it
    is a string or list, else kept in ``extra``)."""
    from dataclasses import replace

    extra = dict(message.extra) if message.extra else {}  # type: ignore[union-attr]
    extra.pop("content", None)
    if _is_content(content):
        return replace(message, content=load_content(content), extra=extra or EMPTY)  # type: ignore[type-var]
    extra["content"] = content
    return replace(message, content=None, extra=extra)  # type: ignore[type-var]


# --------------------------------------------------------------------------- misc

def dump_model_ref(model: ModelRef) -> JSONDict:
    out: JSONDict = {}
    if model.provider is not None:
        out["provider"] = model.provider
    if model.model is not None:
        out["modelId"] = model.model
    return out
