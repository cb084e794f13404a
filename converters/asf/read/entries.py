"""One pi entry back from the ASF entries the writer made of it (see ``reading.py``).

The writer turns one pi entry into a chain of ASF entries sharing its ``legacy_id``; the
last one carries ``pi``, the members ASF has no field for. Here each mapping row of
``docs/formats/asf.md`` is read backwards into the IR entry the writer started from.

pi's entry type names are mirrored below (``BODY_KINDS``): the reader needs them to know
which IR body a ``pi.type`` had, and a converter does not import the pi reader.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from piconv import ir

from .restore import (
    arguments,
    content_from_json,
    extra,
    input_content,
    output_content,
    system_from_json,
    usage_from_json,
    with_kept,
)

JSONDict = dict[str, Any]
Resolve = Callable[[Any], "str | None"]  # an ASF id -> the pi id of the entry it belongs to

BODY_KINDS = {
    "message": "message",
    "custom_message": "message",
    "compaction": "compaction",
    "branch_summary": "branch_summary",
    "model_change": "model_change",
    "thinking_level_change": "reasoning_level_change",
    "label": "label",
    "session_info": "session_name",
    "custom": "extension_state",
    "usage": "usage",
    "context_edit": "context_edit",
}
"""pi entry type -> IR body kind (``piconv.pi.entries.BODY_TABLES`` and the types it handles apart)."""


def _summary_text(item: Any) -> str | None:
    try:
        return item["content"][0]["text"]  # type: ignore[no-any-return]
    except (KeyError, IndexError, TypeError):
        return None


def _last(group: list[JSONDict], type_: str) -> JSONDict:
    return next(e for e in reversed(group) if e.get("type") == type_)


# --------------------------------------------------------------------------- messages


def message(group: list[JSONDict], left: JSONDict) -> ir.Message:
    last = group[-1]
    m: JSONDict = left.get("message") or {}
    ts, more = m.get("timestamp"), extra(m.get("extra"))
    if left.get("type") == "custom_message" or m.get("extension"):
        item = last["item"]
        return ir.ExtensionMessage(
            m.get("extension_type"),
            input_content(item["content"], m),
            m.get("display"),
            m.get("details"),
            ts,
            more,
        )
    if last["type"] == "response":
        return _assistant(group, m)
    if last["type"] == "config":
        return system_from_json(m)
    item = last["item"]
    kind = item.get("type")
    if kind == "function_call_output":
        call_id = m["call_id"] if "call_id" in m else item.get("call_id")
        tool_usage = usage_from_json((m.get("usage") or {}).get("usage")) if "usage" in m else None
        return ir.ToolResult(
            call_id,
            m.get("tool_name"),
            output_content(item.get("output"), m),
            m.get("is_error"),
            m.get("details"),
            tool_usage,
            ts,
            more,
        )
    if kind == "pi:bash_execution":
        return ir.ShellCommand(
            item.get("command"),
            item.get("output"),
            item.get("exit_code"),
            item.get("cancelled"),
            item.get("truncated"),
            item.get("full_output_path"),
            item.get("exclude_from_context"),
            ts,
            more,
        )
    if kind == "pi:message":
        return ir.UnknownMessage(item.get("value"))
    if "kind" in m:
        summary = None if m.get("summary_absent") else _summary_text(item)
        return ir.SummaryMessage(m["kind"], summary, m.get("tokens_before"), m.get("from_id"), ts, more)
    return ir.UserMessage(input_content(item.get("content") or [], m), ts, more)


def _assistant(group: list[JSONDict], m: JSONDict) -> ir.AssistantMessage:
    parts: list[ir.Part | None] = []
    for entry in group:
        if entry.get("type") != "item":
            continue
        item = entry["item"]
        kind = item.get("type")
        if kind == "message":
            parts.extend(ir.Text(p.get("text")) for p in item.get("content") or ())
        elif kind == "reasoning":
            parts.append(
                ir.Reasoning(_summary_text({"content": item.get("summary")}), item.get("encrypted_content"))
            )
        elif kind == "function_call":
            parts.append(
                ir.ToolCall(item.get("call_id"), item.get("name"), arguments(item.get("arguments", "null")))
            )
    content: ir.Content | None = with_kept(parts, m.get("parts"))
    if m.get("content_absent"):
        content = None
    elif m.get("content_form") == "string":
        content = content[0].text if content else ""  # type: ignore[union-attr]
    response = group[-1]
    provider, model, api = m.get("provider"), m.get("model"), m.get("api")
    ref = ir.ModelRef(provider, model, api) if (provider, model, api) != (None, None, None) else None
    response_id = None if m.get("response_id_synthesized") else response.get("response_id")
    return ir.AssistantMessage(
        content,
        ref,
        usage_from_json(m.get("usage")),
        m.get("stop_reason"),  # type: ignore[arg-type]
        m.get("error_message"),
        response_id,
        m.get("response_model"),
        m.get("reasoning_level"),
        m.get("timestamp"),
        extra(m.get("extra")),
    )


# --------------------------------------------------------------------------- other bodies


def body(group: list[JSONDict], left: JSONDict, resolve: Resolve) -> ir.Body:
    """The IR body of the pi entry ``group`` was made from."""
    kind = BODY_KINDS.get(left.get("type")) if type(left.get("type")) is str else None
    last = group[-1]
    if kind == "message":
        return ir.MessageBody(message(group, left))
    if kind == "compaction":
        c = _last(group, "compaction")
        first = left["first_kept_id"] if "first_kept_id" in left else resolve(c.get("first_kept"))
        checkpoint = system_from_json(left["checkpoint"]) if "checkpoint" in left else None
        return ir.Compaction(
            None if left.get("summary_absent") else _summary_text(c.get("summary")),
            first,
            left.get("tokens_before", c.get("tokens_before")),
            checkpoint,
            usage_from_json(left.get("usage")),
            left.get("details"),
            left.get("by_extension"),
        )
    if kind == "branch_summary":
        from_id = left["from_id"] if "from_id" in left else resolve(last.get("from"))
        return ir.BranchSummary(
            None if left.get("summary_absent") else _summary_text(last.get("summary")),
            from_id,
            usage_from_json(left.get("usage")),
            left.get("details"),
            left.get("by_extension"),
        )
    if kind == "model_change":
        return ir.ModelChange(last.get("provider"), last.get("model"))
    if kind == "reasoning_level_change":
        return ir.ReasoningLevelChange(
            left["level"] if "level" in left else (last.get("reasoning") or {}).get("effort")
        )
    if kind == "label":
        if last["type"] == "pi:label":
            return ir.Label(last.get("target_id"), last.get("label"))
        return ir.Label(resolve(last.get("target")), left.get("label", last.get("label")))
    if kind == "session_name":
        return ir.SessionName(last.get("name"))
    if kind == "extension_state":
        return ir.ExtensionState(
            left["extension_type"] if "extension_type" in left else last.get("ns"), last.get("data")
        )
    if kind == "usage":
        data = last.get("data") or {}
        provider, model = left.get("provider"), data.get("model")
        ref = ir.ModelRef(provider, model) if (provider, model) != (None, None) else None
        return ir.UsageRecord(left.get("kind"), ref, usage_from_json(left.get("usage")), left.get("note"))
    if kind == "context_edit":
        return _context_edit(last, left)
    return ir.UnknownBody(left.get("type") if type(left.get("type")) is str else None)


def _context_edit(last: JSONDict, left: JSONDict) -> ir.ContextEdit:
    omit = bool(left.get("omit")) or (last["type"] == "config" and "omit" in last)
    replacement: ir.Content | None = None
    if "replacement" in last:
        replacement = input_content(last["replacement"], left.get("replacement_form") or {})
    elif "replacement" in left:
        replacement = content_from_json(left["replacement"])
    return ir.ContextEdit(left.get("target_id"), omit, replacement)
