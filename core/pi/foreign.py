"""IR objects any reader made, as the JSON objects pi 1.6.0 holds.

A document read from a pi file is written back from its own members (``entries.py``,
``model.py``: ``extra`` merged over the typed fields). Another reader's ``extra`` holds
*its* format's members (an ASF item's ``id``, ``status``...), which mean nothing to pi
and may even collide with pi's names (an item's ``id`` is not a tool call's id), so here
only the typed fields are written, in pi's names, and every member left behind is
listed for the loss report. Where pi needs a member the source did not have (an
assistant message's ``usage``: pi's footer adds it up; ``stopReason``, ``isError``,
``toolName``, a message's ``timestamp``), pi's neutral value is written and listed.

The same mapping renders the context of such a document in pi's shape
(``context.context_as_pi``), so what ``piconv inspect --context`` prints for it is what
pi shows after ``--to pi`` (``tests/test_pi_export.py`` holds that to pi 1.6.0 itself).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ir import (
    AssistantMessage,
    Content,
    Cost,
    Entry,
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
from .jsdate import js_time
from .model import STOP_REASONS_BACK, SUMMARY_ROLES_BACK

JSONDict = dict[str, Any]
Note = Callable[[str, str], None]
"""``note(code, detail)``: what the mapping could not carry, or had to make up."""

THINKING_LEVELS = frozenset({"off", "minimal", "low", "medium", "high", "xhigh"})
LEVEL_NAMES = {"none": "off"}
"""Reasoning efforts pi names otherwise (RFC 0001's ``none`` is pi's ``off``)."""


def _quiet(_code: str, _detail: str) -> None:
    return None


def pi_level(level: str | None) -> str:
    """pi's thinking level for the IR's reasoning level; none named: pi's default, ``off``."""
    if level is None:
        return "off"
    return LEVEL_NAMES.get(level, level)


def pi_model(model: ModelRef | None) -> JSONDict | None:
    """pi's ``{provider, modelId}`` of a context (members the source does not name left out)."""
    if model is None:
        return None
    out: JSONDict = {}
    if model.provider is not None:
        out["provider"] = model.provider
    if model.model is not None:
        out["modelId"] = model.model
    return out


def pi_time(value: float | None, entry: Entry | None) -> int | float | None:
    """A message's time in milliseconds: its own, else its entry's as pi reads it."""
    if value is None:
        return js_time(entry.timestamp) if entry is not None and entry.timestamp is not None else None
    return int(value) if float(value).is_integer() else value


def _left(obj: Any, where: str, note: Note) -> None:
    extra = getattr(obj, "extra", None)
    if extra:
        note("member-not-kept", f"{where}: {', '.join(sorted(map(str, extra)))}")


# --------------------------------------------------------------------------- usage


def pi_usage(usage: Usage | None, where: str, note: Note) -> JSONDict:
    """pi's usage object, every count pi adds up present (``0`` where the source had none)."""
    if usage is None:
        note("pi-default-filled", f"{where}: usage (zeros)")
        usage = Usage()
    _left(usage, f"{where} usage", note)
    out: JSONDict = {}
    for key, value in (
        ("input", usage.input_tokens),
        ("output", usage.output_tokens),
        ("cacheRead", usage.cache_read_tokens),
        ("cacheWrite", usage.cache_write_tokens),
    ):
        out[key] = value if value is not None else 0
    if usage.cache_write_1h_tokens is not None:
        out["cacheWrite1h"] = usage.cache_write_1h_tokens
    if usage.reasoning_tokens is not None:
        out["reasoning"] = usage.reasoning_tokens
    total = usage.total_tokens
    out["totalTokens"] = (
        total if total is not None else out["input"] + out["output"] + out["cacheRead"] + out["cacheWrite"]
    )
    cost = usage.cost if usage.cost is not None else Cost()
    _left(cost, f"{where} cost", note)
    out["cost"] = {
        key: value if value is not None else 0
        for key, value in (
            ("input", cost.input),
            ("output", cost.output),
            ("cacheRead", cost.cache_read),
            ("cacheWrite", cost.cache_write),
            ("total", cost.total),
        )
    }
    return out


# --------------------------------------------------------------------------- content


def pi_part(part: Part, where: str, note: Note) -> JSONDict | None:
    """pi's content block for an IR part; ``None`` for a part pi cannot hold (pi-ai
    would send an unknown block to the model as a broken image)."""
    cls = type(part)
    _left(part, f"{where} {getattr(part, 'type', 'part')} part", note)
    if cls is Text:
        out: JSONDict = {"type": "text", "text": part.text if part.text is not None else ""}  # type: ignore[union-attr]
        if part.signature is not None:  # type: ignore[union-attr]
            out["textSignature"] = part.signature  # type: ignore[union-attr]
        return out
    if cls is Image:
        return {"type": "image", "data": part.data or "", "mimeType": part.media_type or ""}  # type: ignore[union-attr]
    if cls is Reasoning:
        out = {"type": "thinking", "thinking": part.text if part.text is not None else ""}  # type: ignore[union-attr]
        if part.signature is not None:  # type: ignore[union-attr]
            out["thinkingSignature"] = part.signature  # type: ignore[union-attr]
        if part.redacted is not None:  # type: ignore[union-attr]
            out["redacted"] = part.redacted  # type: ignore[union-attr]
        return out
    if cls is ToolCall:
        arguments = part.arguments if part.arguments is not None else {}  # type: ignore[union-attr]
        out = {"type": "toolCall", "id": part.call_id or "", "name": part.name or "", "arguments": arguments}  # type: ignore[union-attr]
        if part.signature is not None:  # type: ignore[union-attr]
            out["thoughtSignature"] = part.signature  # type: ignore[union-attr]
        return out
    kind = part.type if cls is UnknownPart else None  # type: ignore[union-attr]
    note("part-not-kept", f"{where}: a {kind or 'typeless'} part pi has no block for")
    return None


def pi_content(content: Content | None, where: str, note: Note, *, blocks: bool = False) -> Any:
    """pi's content: a string as it is (as blocks where pi takes only blocks), parts as
    blocks; none: an empty list (what pi makes of missing content)."""
    if content is None:
        return []
    if type(content) is str:
        return [{"type": "text", "text": content}] if blocks else content
    out = []
    for part in content:
        block = pi_part(part, where, note)
        if block is not None:
            out.append(block)
    return out


def _tools(tools: tuple[ToolSpec, ...], where: str, note: Note) -> list[JSONDict]:
    out = []
    for tool in tools:
        _left(tool, f"{where} tool", note)
        spec: JSONDict = {"name": tool.name or ""}
        if tool.description is not None:
            spec["description"] = tool.description
        if tool.parameters is not None:
            spec["parameters"] = tool.parameters
        out.append(spec)
    return out


# --------------------------------------------------------------------------- messages


def pi_message(message: Message, entry: Entry | None = None, note: Note = _quiet) -> JSONDict | None:
    """pi's message object for an IR message (``entry``: the entry it belongs to, whose
    time stands in for a message without one); ``None`` for a value pi cannot take as a
    message (an unknown message that is no JSON object)."""
    cls = type(message)
    where = f"{getattr(message, 'role', None) or 'unknown'} message"
    if cls is UnknownMessage:
        value = message.value  # type: ignore[union-attr]
        if type(value) is not dict:
            note("message-not-kept", f"{where}: a {type(value).__name__}, not an object")
            return None
        note("message-not-sent", f"{where} (role {value.get('role')!r}): kept; pi's model never sees it")
        return value
    _left(message, where, note)
    out: JSONDict
    if cls is UserMessage:
        out = {"role": "user", "content": pi_content(message.content, where, note)}  # type: ignore[union-attr]
    elif cls is AssistantMessage:
        m: AssistantMessage = message  # type: ignore[assignment]
        out = {"role": "assistant", "content": pi_content(m.content, where, note, blocks=True)}
        if m.model is not None:
            for key, value in (
                ("api", m.model.api),
                ("provider", m.model.provider),
                ("model", m.model.model),
            ):
                if value is not None:
                    out[key] = value
        if m.response_id is not None:
            out["responseId"] = m.response_id
        if m.response_model is not None:
            out["responseModel"] = m.response_model
        out["usage"] = pi_usage(m.usage, where, note)
        stop = m.stop_reason
        if stop is None:
            calls = any(type(p) is ToolCall for p in m.content or ())
            stop = "tool_use" if calls else "stop"
            note("pi-default-filled", f"{where}: stopReason {STOP_REASONS_BACK.get(stop, stop)!r}")
        out["stopReason"] = STOP_REASONS_BACK.get(stop, stop)
        if m.error_message is not None:
            out["errorMessage"] = m.error_message
        if m.reasoning_level is not None:
            out["thinkingLevel"] = m.reasoning_level
    elif cls is ToolResult:
        r: ToolResult = message  # type: ignore[assignment]
        if r.tool_name is None:
            note("pi-default-filled", f"{where}: toolName ''")
        if r.is_error is None:
            note("pi-default-filled", f"{where}: isError false")
        out = {
            "role": "toolResult",
            "toolCallId": r.call_id or "",
            "toolName": r.tool_name or "",
            "content": pi_content(r.content, where, note, blocks=True),  # pi-ai filters it: a list
            "isError": bool(r.is_error),
        }
        if r.details is not None:
            out["details"] = r.details
        if r.usage is not None:
            out["usage"] = pi_usage(r.usage, where, note)
    elif cls is SystemMessage:
        s: SystemMessage = message  # type: ignore[assignment]
        out = {
            "role": "system",
            "content": pi_content(s.content, where, note) if s.content is not None else "",
        }
        if s.sections is not None:
            out["sections"] = dict(s.sections)
        if s.tools_added is not None:
            out["toolsAdded"] = _tools(s.tools_added, where, note)
        if s.tools_removed is not None:
            out["toolsRemoved"] = _tools(s.tools_removed, where, note)
    elif cls is ShellCommand:
        c: ShellCommand = message  # type: ignore[assignment]
        out = {"role": "bashExecution", "command": c.command or "", "output": c.output or ""}
        for key, value in (
            ("exitCode", c.exit_code),
            ("cancelled", c.cancelled),
            ("truncated", c.truncated),
            ("fullOutputPath", c.full_output_path),
            ("excludeFromContext", c.exclude_from_context),
        ):
            if value is not None:
                out[key] = value
    elif cls is ExtensionMessage:
        x: ExtensionMessage = message  # type: ignore[assignment]
        out = {
            "role": "custom",
            "customType": x.extension_type or "",
            "content": pi_content(x.content, where, note),
        }
        if x.display is not None:
            out["display"] = x.display
        if x.details is not None:
            out["details"] = x.details
    else:  # SummaryMessage
        sm: SummaryMessage = message  # type: ignore[assignment]
        out = {"role": SUMMARY_ROLES_BACK.get(sm.kind, "compactionSummary")}
        if sm.summary is not None:
            out["summary"] = sm.summary
        if sm.tokens_before is not None:
            out["tokensBefore"] = sm.tokens_before
        if sm.from_id is not None:
            out["fromId"] = sm.from_id
    stamp = pi_time(message.timestamp, entry)  # type: ignore[union-attr]
    if stamp is not None:
        out["timestamp"] = stamp
    return out
