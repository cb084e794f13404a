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

from ..ir import (
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
from .tables import compile_loader

JSONDict = dict[str, Any]


Loader = Callable[[Any], Any]
Dumper = Callable[[Any], Any]
Table = dict[str, tuple[str, str, Loader | None, Dumper | None]]
"""pi key -> (IR field, accepted JSON type (a :data:`piconv.pi.tables.TESTS` name), load, dump)."""


def compile_table(cls: type, table: Table, **kwargs: Any) -> Callable[..., Any]:
    """The compiled reader of ``table`` (see :func:`piconv.pi.tables.compile_loader`)."""
    return compile_loader(cls, {k: (f, t, load) for k, (f, t, load, _d) in table.items()}, **kwargs)


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
    "input": ("input", "num", None, None),
    "output": ("output", "num", None, None),
    "cacheRead": ("cache_read", "num", None, None),
    "cacheWrite": ("cache_write", "num", None, None),
    "total": ("total", "num", None, None),
}


load_cost: Callable[[JSONDict], Cost] = compile_table(Cost, COST)


def dump_cost(cost: Cost) -> JSONDict:
    return _join(cost, COST, {})


USAGE: Table = {
    "input": ("input_tokens", "num", None, None),
    "output": ("output_tokens", "num", None, None),
    "cacheRead": ("cache_read_tokens", "num", None, None),
    "cacheWrite": ("cache_write_tokens", "num", None, None),
    "cacheWrite1h": ("cache_write_1h_tokens", "num", None, None),
    "reasoning": ("reasoning_tokens", "num", None, None),
    "totalTokens": ("total_tokens", "num", None, None),
    "cost": ("cost", "dict", load_cost, dump_cost),
}


load_usage: Callable[[JSONDict], Usage] = compile_table(Usage, USAGE)


def dump_usage(usage: Usage) -> JSONDict:
    return _join(usage, USAGE, {})


# --------------------------------------------------------------------------- content parts

TEXT: Table = {
    "text": ("text", "str", None, None),
    "textSignature": ("signature", "str", None, None),
}
IMAGE: Table = {
    "data": ("data", "str", None, None),
    "mimeType": ("media_type", "str", None, None),
}
THINKING: Table = {
    "thinking": ("text", "str", None, None),
    "thinkingSignature": ("signature", "str", None, None),
    "redacted": ("redacted", "bool", None, None),
}
TOOL_CALL: Table = {
    "id": ("call_id", "str", None, None),
    "name": ("name", "str", None, None),
    "arguments": ("arguments", "any", None, None),
    "thoughtSignature": ("signature", "str", None, None),
    "namespace": ("namespace", "str", None, None),
}
PART_KINDS: dict[str, tuple[type, Table]] = {
    "text": (Text, TEXT),
    "image": (Image, IMAGE),
    "thinking": (Reasoning, THINKING),
    "toolCall": (ToolCall, TOOL_CALL),
}
PART_TYPE_NAMES: dict[type, str] = {cls: name for name, (cls, _t) in PART_KINDS.items()}
_PART_LOADERS: dict[str, Callable[[JSONDict], Part]] = {
    name: compile_table(cls, table, skip=("type",)) for name, (cls, table) in PART_KINDS.items()
}


def load_part(raw: Any) -> Part:
    if type(raw) is dict:
        kind = raw.get("type")
        loader = _PART_LOADERS.get(kind) if type(kind) is str else None
        if loader is not None:
            return loader(raw)
    return UnknownPart(raw)


def dump_part(part: Part) -> Any:
    if type(part) is UnknownPart:
        return part.value
    cls = type(part)
    name = PART_TYPE_NAMES[cls]
    return _join(part, PART_KINDS[name][1], {"type": name})


def load_content(raw: Any) -> Content:
    """Message content: a string as it is, a list of parts as a tuple of IR parts."""
    if type(raw) is str:
        return raw
    return tuple([load_part(item) for item in raw])


def dump_content(content: Content) -> Any:
    if type(content) is str:
        return content
    return [dump_part(p) for p in content]


# --------------------------------------------------------------------------- tools

TOOL_SPEC: Table = {
    "name": ("name", "str", None, None),
    "description": ("description", "str", None, None),
    "parameters": ("parameters", "any", None, None),
}


load_tool: Callable[[JSONDict], ToolSpec] = compile_table(ToolSpec, TOOL_SPEC)


def dump_tool(tool: ToolSpec) -> JSONDict:
    return _join(tool, TOOL_SPEC, {})


def load_tools(raw: list[JSONDict]) -> tuple[ToolSpec, ...]:
    return tuple(load_tool(t) for t in raw)


def dump_tools(tools: tuple[ToolSpec, ...]) -> list[JSONDict]:
    return [dump_tool(t) for t in tools]


# --------------------------------------------------------------------------- messages

_TIMESTAMP = ("timestamp", "num", None, None)

SYSTEM: Table = {
    "content": ("content", "content", load_content, dump_content),
    "sections": ("sections", "sections", None, None),
    "toolsAdded": ("tools_added", "tools", load_tools, dump_tools),
    "toolsRemoved": ("tools_removed", "tools", load_tools, dump_tools),
    "timestamp": _TIMESTAMP,
}
USER: Table = {
    "content": ("content", "content", load_content, dump_content),
    "timestamp": _TIMESTAMP,
}
STOP_REASONS = {"toolUse": "tool_use"}
STOP_REASONS_BACK = {v: k for k, v in STOP_REASONS.items()}


def _load_stop(v: str) -> str:
    return STOP_REASONS.get(v, v)


def _dump_stop(v: str) -> str:
    return STOP_REASONS_BACK.get(v, v)


ASSISTANT: Table = {
    "content": ("content", "content", load_content, dump_content),
    "usage": ("usage", "dict", load_usage, dump_usage),
    "stopReason": ("stop_reason", "str", _load_stop, _dump_stop),
    "errorMessage": ("error_message", "str", None, None),
    "responseId": ("response_id", "str", None, None),
    "responseModel": ("response_model", "str", None, None),
    "thinkingLevel": ("reasoning_level", "str", None, None),
    "timestamp": _TIMESTAMP,
}
_ASSISTANT_MODEL = {"api": "api", "provider": "provider", "model": "model"}
TOOL_RESULT: Table = {
    "toolCallId": ("call_id", "str", None, None),
    "toolName": ("tool_name", "str", None, None),
    "content": ("content", "content", load_content, dump_content),
    "isError": ("is_error", "bool", None, None),
    "details": ("details", "any", None, None),
    "usage": ("usage", "dict", load_usage, dump_usage),
    "timestamp": _TIMESTAMP,
}
SHELL: Table = {
    "command": ("command", "str", None, None),
    "output": ("output", "str", None, None),
    "exitCode": ("exit_code", "num", None, None),
    "cancelled": ("cancelled", "bool", None, None),
    "truncated": ("truncated", "bool", None, None),
    "fullOutputPath": ("full_output_path", "str", None, None),
    "excludeFromContext": ("exclude_from_context", "bool", None, None),
    "timestamp": _TIMESTAMP,
}
EXTENSION: Table = {
    "customType": ("extension_type", "str", None, None),
    "content": ("content", "content", load_content, dump_content),
    "display": ("display", "bool", None, None),
    "details": ("details", "any", None, None),
    "timestamp": _TIMESTAMP,
}
SUMMARY: Table = {
    "summary": ("summary", "str", None, None),
    "tokensBefore": ("tokens_before", "num", None, None),
    "fromId": ("from_id", "str", None, None),
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


_MESSAGE_LOADERS: dict[str, Callable[..., Message]] = {
    role: compile_table(
        cls,
        table,
        skip=("role",),
        groups={"model": (ModelRef, _ASSISTANT_MODEL)} if cls is AssistantMessage else None,
    )
    for role, (cls, table) in ROLE_TABLES.items()
}
_load_summary = compile_table(SummaryMessage, SUMMARY, skip=("role",))


def load_message(raw: JSONDict) -> Message:
    """An IR message from a pi message object (any role; unknown roles kept verbatim)."""
    role = raw.get("role")
    if type(role) is str:
        loader = _MESSAGE_LOADERS.get(role)
        if loader is not None:
            return loader(raw)
        kind = SUMMARY_ROLES.get(role)
        if kind is not None:
            return _load_summary(raw, kind=kind)
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
    from ..records import replace

    extra = dict(message.extra) if message.extra else {}  # type: ignore[union-attr]
    extra.pop("content", None)
    if type(content) is str or type(content) is list:
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
