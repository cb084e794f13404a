"""pi entries → ASF entry bodies: the mapping of ``docs/formats/asf.md``, row by row.

A pi entry becomes one or more ASF lines, each ``(type, body, is_item)``; the caller chains
them parent → child and writes them. Every pi member ASF has no field for is recorded in
``left`` (the entry's ``pi`` member), so nothing is lost. :class:`Mapper` holds what the
mapping needs to know of the entries already written: their ASF ids, their items, the call
ids handed out.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from piconv import ir
from piconv.report import Report

from .items import arguments_text, input_parts, part_json, usage
from .links import Ancestry
from .settings import JSONDict, Settings, apply_system, assistant_settings, function_tool

__all__ = ["CALL_ID_CHARS", "EDITABLE", "Line", "Mapper", "Written", "summary_item"]

CALL_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]")
EDITABLE = (
    ir.UserMessage,
    ir.AssistantMessage,
    ir.ToolResult,
    ir.ExtensionMessage,
)  # what pi's context edits change
_EFFORT = {"off": "none"}
Line = tuple[str, JSONDict, bool]
"""One ASF line to write: its type, its body and whether it is an item entry."""


class Written(NamedTuple):
    """What became of one pi entry, kept while the session is written: the one record per
    entry a streamed conversion holds (children need their parent's last ASF id and
    settings; compactions, labels, branch summaries and context edits name earlier
    entries)."""

    first: str
    """Its first ASF id."""
    last: str
    """Its last ASF id (its children hang below it)."""
    state: Settings
    """The settings in force after it (shared between entries until one changes them)."""
    items: tuple[str, ...]
    """Its item entries (what a context edit omits or replaces)."""
    editable: bool
    """A message whose content pi's context edits may replace."""


class Mapper:
    """The mapping of one conversion, with what it knows of the entries already written."""

    __slots__ = ("ancestry", "call_ids", "call_map", "report", "written")

    def __init__(self, report: Report, ancestry: Ancestry) -> None:
        self.report = report
        self.ancestry = ancestry  # every ASF id written, with its parent
        self.written: dict[str, Written] = {}  # pi id -> what became of it
        self.call_ids: set[str] = set()
        self.call_map: dict[str, str] = {}

    def call_id(self, native: str | None, line: int) -> str:
        if native and native not in self.call_ids:
            self.call_ids.add(native)
            self.call_map[native] = native
            return native
        # Empty or already taken (on any branch): one of our own, from the portable alphabet.
        base = CALL_ID_CHARS.sub("_", native or "") or "call"
        candidate = base
        n = 1
        while candidate in self.call_ids:
            n += 1
            candidate = f"{base}_{n}"
        if candidate != native:
            self.report.add("call-id-rewritten", line, f"{native!r} -> {candidate!r}")
        self.call_ids.add(candidate)
        if native is not None:
            self.call_map[native] = candidate
        return candidate

    def ref(self, pi_id: str | None, which: int = 1) -> str | None:
        record = self.written.get(pi_id) if pi_id is not None else None
        return record[which] if record else None

    def unwritable_parameters(self, msg: ir.SystemMessage, line: int) -> None:
        """Reports the tools of ``msg`` whose parameters are no JSON object: an Open
        Responses tool has none then (the value stays in the entry's ``pi`` member)."""
        for spec in msg.tools_added or ():
            if spec.parameters is not None and type(spec.parameters) is not dict:
                kind = type(spec.parameters).__name__
                self.report.add(
                    "tool-parameters-kept-aside", line, f"tool {spec.name!r}: parameters are a {kind}"
                )

    # ------------------------------------------------------------------ entries

    def map_body(
        self, entry: ir.Entry, state: Settings, left: JSONDict, parent: str | None
    ) -> tuple[list[Any], Settings]:
        body = entry.body
        line = entry.origin.line
        cls = type(body)
        if cls is ir.MessageBody:
            return self.map_message(entry, body.message, state, left)
        if cls is ir.ModelChange:
            new = Settings(
                body.model,
                body.provider,
                state.effort,
                state.level,
                state.content,
                state.sections,
                state.tools,
            )
            delta: JSONDict = {}
            if body.model is not None:
                delta["model"] = body.model
            if body.provider is not None:
                delta["provider"] = body.provider
            return [("config", delta, False)], new
        if cls is ir.ReasoningLevelChange:
            effort = _EFFORT.get(body.level, body.level) if body.level is not None else None
            new = Settings(
                state.model, state.provider, effort, body.level, state.content, state.sections, state.tools
            )
            delta = {"reasoning": {"effort": effort}} if effort is not None else {}
            if body.level is not None and effort != body.level:
                left["level"] = body.level
            return [("config", delta, False)], new
        if cls is ir.Compaction:
            return self.map_compaction(entry, body, state, left, parent), state
        if cls is ir.BranchSummary:
            # A summary whose fromId names no written entry points at the entry it hangs
            # below; at a root that is the root's config line ("" until it is written).
            out: JSONDict = {
                "from": self.ref(body.from_id) or parent or "",
                "summary": summary_item(body.summary),
            }
            if self.ref(body.from_id) is None:
                self.report.add(
                    "branch-from-unresolved", line, f"fromId {body.from_id!r} names no written entry"
                )
                left["from_id"] = body.from_id
            u = usage(body.usage, left)
            if u is not None:
                out["usage"] = u
            _keep(
                left,
                details=body.details,
                by_extension=body.by_extension,
                summary_absent=body.summary is None or None,
            )
            return [("branch_summary", out, False)], state
        if cls is ir.Label:
            target = self.ref(body.target_id)
            if target is None:
                self.report.add(
                    "ref-unresolved", line, f"label target {body.target_id!r} names no written entry"
                )
                return [("pi:label", {"target_id": body.target_id, "label": body.label}, False)], state
            if body.label == "":
                left["label"] = ""  # pi's empty label, null (clears) in ASF
            return [("label", {"target": target, "label": body.label or None}, False)], state
        if cls is ir.SessionName:
            return [("info", {"name": body.name}, False)], state
        if cls is ir.ExtensionState:
            if body.extension_type is None:
                left["extension_type"] = None  # no customType: ns "pi" stands in
            return [("custom", {"ns": body.extension_type or "pi", "data": body.data}, False)], state
        if cls is ir.UsageRecord:
            data: JSONDict = {}
            u = usage(body.usage, left)
            if u is not None:
                data["usage"] = u
            if body.model is not None and body.model.model is not None:
                data["model"] = body.model.model
            _keep(
                left,
                kind=body.usage_kind,
                note=body.note,
                provider=body.model.provider if body.model else None,
            )
            self.report.add("usage-entry-as-custom", line)
            return [("custom", {"ns": "pi:usage", "data": data}, False)], state
        if cls is ir.ContextEdit:
            return self.map_context_edit(entry, body, left), state
        self.report.add(
            "unknown-entry-type",
            line,
            f"pi entry type {entry.origin.source_type!r} kept as a namespaced entry",
        )
        return [("pi:entry", {}, False)], state

    def map_message(
        self, entry: ir.Entry, msg: ir.Message, state: Settings, left: JSONDict
    ) -> tuple[list[Any], Settings]:
        cls = type(msg)
        line = entry.origin.line
        m: JSONDict = {}
        left["message"] = m
        if getattr(msg, "timestamp", None) is not None:
            m["timestamp"] = msg.timestamp
        if cls is not ir.UnknownMessage and msg.extra:
            m["extra"] = dict(msg.extra)
        if cls is ir.SystemMessage:
            self.unwritable_parameters(msg, line)
            new = apply_system(state, msg)
            delta: JSONDict = {"instructions": new.instructions()}
            if msg.tools_added:
                delta["tools_added"] = [function_tool(t) for t in msg.tools_added]
            if msg.tools_removed:
                delta["tools_removed"] = [t.name or "" for t in msg.tools_removed]
            m.update(_system_json(msg))
            return [("config", delta, False)], new
        if cls is ir.UserMessage:
            item = {"type": "message", "role": "user", "content": input_parts(msg.content, m)}
            return [("item", {"item": item}, True)], state
        if cls is ir.AssistantMessage:
            return self.map_assistant(entry, msg, state, m)
        if cls is ir.ToolResult:
            call = self.call_map.get(msg.call_id or "")
            if call is None:
                self.report.add(
                    "tool-result-unmatched", line, f"toolCallId {msg.call_id!r} matches no tool call"
                )
                call = CALL_ID_CHARS.sub("_", msg.call_id or "") or "missing"
            if call != msg.call_id:
                m["call_id"] = msg.call_id
            content = msg.content
            if type(content) is str or (
                content is not None and len(content) == 1 and type(content[0]) is ir.Text
            ):
                text = content if type(content) is str else (content[0].text or "")
                output: Any = text
                if type(content) is str:
                    m["content_form"] = "string"
                elif content[0].signature is not None or content[0].extra or content[0].text is None:
                    m["parts"] = [
                        {
                            "at": 0,
                            "signature": content[0].signature,
                            "extra": dict(content[0].extra),
                            "text_absent": content[0].text is None,
                        }
                    ]
            else:
                output = input_parts(content, m)
                if content is None:
                    m["content_absent"] = True
            item = {"type": "function_call_output", "call_id": call, "output": output}
            if msg.is_error:
                item["status"] = "completed"
            if msg.tool_name is not None:  # _keep spelled out: one per tool result
                m["tool_name"] = msg.tool_name
            if msg.is_error is not None:
                m["is_error"] = msg.is_error
            if msg.details is not None:
                m["details"] = msg.details
            if msg.usage is not None:
                m["usage"] = {}
                usage(msg.usage, m["usage"])
            return [("item", {"item": item}, True)], state
        if cls is ir.ExtensionMessage:
            if entry.origin.source_type != "custom_message":
                m["extension"] = True  # a user item otherwise: the role says which
            item = {"type": "message", "role": "user", "content": input_parts(msg.content, m)}
            body: JSONDict = {"item": item}
            if msg.display is False:
                body["visible"] = False
            _keep(m, extension_type=msg.extension_type, display=msg.display, details=msg.details)
            return [("item", body, True)], state
        if cls is ir.ShellCommand:
            self.report.add("shell-command-as-extension-item", line)
            item = {"type": "pi:bash_execution"}
            for name in (
                "command",
                "output",
                "exit_code",
                "cancelled",
                "truncated",
                "full_output_path",
                "exclude_from_context",
            ):
                value = getattr(msg, name)
                if value is not None:
                    item[name] = value
            return [("item", {"item": item}, True)], state
        if cls is ir.SummaryMessage:
            _keep(
                m,
                kind=msg.kind,
                tokens_before=msg.tokens_before,
                from_id=msg.from_id,
                summary_absent=msg.summary is None or None,
            )
            return [("item", {"item": summary_item(msg.summary)}, True)], state
        self.report.add("unknown-message-role", line, f"role {msg.role!r} kept as a namespaced item")
        return [("item", {"item": {"type": "pi:message", "value": msg.value}}, True)], state

    def map_assistant(
        self, entry: ir.Entry, msg: ir.AssistantMessage, state: Settings, m: JSONDict
    ) -> tuple[list[Any], Settings]:
        line = entry.origin.line
        lines: list[Any] = []
        ref = msg.model
        new = assistant_settings(state, ref)
        if new is not state:
            delta = {k: v for k, v in (("model", ref.model), ("provider", ref.provider)) if v is not None}
            lines.append(("config", delta, False))
        response_id = msg.response_id or f"resp_{entry.id}"
        if msg.response_id is None:
            m["response_id_synthesized"] = True
        text_parts: list[JSONDict] = []
        kept: list[Any] = []

        def flush() -> None:
            if text_parts:
                item = {
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": list(text_parts),
                }
                lines.append(("item", {"item": item, "response": response_id}, True))
                text_parts.clear()

        content = msg.content
        if type(content) is str:  # a string where pi's type says parts: one text part
            m["content_form"] = "string"
            content = (ir.Text(text=content),)
        for index, part in enumerate(content or ()):
            cls = type(part)
            if cls is ir.Text:
                text_parts.append({"type": "output_text", "text": part.text or "", "annotations": []})
                if part.signature is not None or part.extra or part.text is None:
                    kept.append(
                        {
                            "at": index,
                            "signature": part.signature,
                            "extra": dict(part.extra),
                            "text_absent": part.text is None,
                        }
                    )
                continue
            flush()
            if cls is ir.Reasoning:
                item: JSONDict = {"type": "reasoning", "summary": []}
                if part.text:
                    item["summary"] = [{"type": "summary_text", "text": part.text}]
                if part.signature is not None:
                    item["encrypted_content"] = part.signature
                if part.redacted is not None or part.extra or part.text == "":
                    kept.append(
                        {"at": index, "redacted": part.redacted, "extra": dict(part.extra), "text": part.text}
                    )
                lines.append(("item", {"item": item, "response": response_id}, True))
            elif cls is ir.ToolCall:
                call = self.call_id(part.call_id, line)
                item = {
                    "type": "function_call",
                    "call_id": call,
                    "name": part.name or "",
                    "arguments": arguments_text(part.arguments),
                }
                if (
                    call != part.call_id
                    or part.signature is not None
                    or part.namespace is not None
                    or part.extra
                    or type(part.arguments) is not dict
                    or part.name is None
                ):
                    kept.append(
                        {
                            "at": index,
                            "call_id": part.call_id,
                            "signature": part.signature,
                            "namespace": part.namespace,
                            "extra": dict(part.extra),
                            "arguments_type": type(part.arguments).__name__,
                            "name_absent": part.name is None,
                        }
                    )
                lines.append(("item", {"item": item, "response": response_id}, True))
            else:
                self.report.add(
                    "unknown-part", line, f"assistant part {getattr(part, 'type', None)!r} kept aside"
                )
                kept.append({"at": index, "part": part_json(part)})
        flush()
        if kept:
            m["parts"] = kept
        if msg.content is None:
            m["content_absent"] = True
        response: JSONDict = {"response_id": response_id}
        model = msg.response_model or (ref.model if ref else None)
        if model is not None:
            response["model"] = model
        stop = msg.stop_reason
        response["status"] = {"error": "failed", "aborted": "incomplete", "length": "incomplete"}.get(
            stop or "", "completed"
        )
        if stop == "error" or msg.error_message is not None:
            response["error"] = {"code": stop or "error", "message": msg.error_message or ""}
        if stop == "length":
            response["incomplete"] = {"reason": "max_output_tokens"}
        elif stop == "aborted":
            response["incomplete"] = {"reason": "aborted"}
        u = usage(msg.usage, m)
        if u is not None:
            response["usage"] = u
            if msg.usage is not None and msg.usage.cost is not None:
                self.report.add("cost-not-representable", line)
        # _keep(m, stop_reason=..., ...) spelled out: one per assistant message
        if stop is not None:
            m["stop_reason"] = stop
        if msg.error_message is not None:
            m["error_message"] = msg.error_message
        if msg.response_model is not None:
            m["response_model"] = msg.response_model
        if msg.reasoning_level is not None:
            m["reasoning_level"] = msg.reasoning_level
        if ref is not None:
            if ref.api is not None:
                m["api"] = ref.api
            if ref.provider is not None:
                m["provider"] = ref.provider
            if ref.model is not None:
                m["model"] = ref.model
        lines.append(("response", response, False))
        return lines, new

    def map_compaction(
        self, entry: ir.Entry, body: ir.Compaction, state: Settings, left: JSONDict, parent: str | None
    ) -> list[Any]:
        line = entry.origin.line
        lines: list[Any] = []
        # firstKeptEntryId on the pi path to the parent <=> its last ASF entry on the ASF
        # path to the parent's last (each pi entry is a chain hung below its parent's last).
        pair = self.written.get(body.first_kept_id) if body.first_kept_id is not None else None
        first_kept = pair[0] if pair is not None else None
        if pair is None or not self.ancestry.on_path(pair[1], parent):
            # pi keeps nothing before the summary here (firstKeptEntryId is the compaction
            # itself or not on the path): an anchor entry that carries no context stands
            # for "from here", since an id cannot name the entry it is part of.
            self.report.add(
                "compaction-anchor", line, f"firstKeptEntryId {body.first_kept_id!r}: nothing kept"
            )
            lines.append(("custom", {"ns": "piconv", "data": {"anchor": "compaction-first-kept"}}, False))
            left["first_kept_id"] = body.first_kept_id
            first_kept = None
        checkpoint = state
        if body.checkpoint is not None:
            self.unwritable_parameters(body.checkpoint, line)
            checkpoint = apply_system(
                Settings(state.model, state.provider, state.effort, state.level), body.checkpoint
            )
            left["checkpoint"] = _system_json(body.checkpoint)
        out: JSONDict = {
            "first_kept": first_kept or "",
            "summary": summary_item(body.summary),
            "config": checkpoint.full(),
        }
        if type(body.tokens_before) is int and body.tokens_before >= 0:
            out["tokens_before"] = body.tokens_before
        elif body.tokens_before is not None:
            left["tokens_before"] = body.tokens_before
        u = usage(body.usage, left)
        if u is not None:
            out["usage"] = u
        _keep(
            left,
            details=body.details,
            by_extension=body.by_extension,
            summary_absent=body.summary is None or None,
        )
        lines.append(("compaction", out, False))
        return lines

    def map_context_edit(self, entry: ir.Entry, body: ir.ContextEdit, left: JSONDict) -> list[Any]:
        line = entry.origin.line
        record = self.written.get(body.target_id or "")
        targets = record.items if record is not None else ()
        left["target_id"] = body.target_id
        if body.omit and targets:
            return [("config", {"omit": {"items": list(targets)}}, False)]
        if body.omit:
            left["omit"] = True
        elif body.replacement is not None:
            if targets and record is not None and record.editable:
                # The target's items keep their kind; their content becomes the replacement
                # (RFC 0001 extension entry, honoured by context.py: see asf.md).
                form: JSONDict = {}
                replacement = input_parts(body.replacement, form)
                if form:
                    left["replacement_form"] = form
                return [
                    (
                        "pi:context_edit",
                        {
                            "target": self.ref(body.target_id),
                            "items": list(targets),
                            "replacement": replacement,
                        },
                        False,
                    )
                ]
            left["replacement"] = _content_json(body.replacement)
        self.report.add(
            "context-edit-not-applied",
            line,
            "a context edit naming no item of a message pi can edit has no ASF form; kept as pi:context_edit",
        )
        return [("pi:context_edit", {"target": self.ref(body.target_id)}, False)]


def _keep(left: JSONDict, **members: Any) -> None:
    for key, value in members.items():
        if value is not None:
            left[key] = value


def summary_item(summary: str | None) -> JSONDict:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary or ""}]}


def _content_json(content: ir.Content | None) -> Any:
    if content is None or type(content) is str:
        return content
    return [part_json(part) for part in content]


def _system_json(msg: ir.SystemMessage) -> JSONDict:
    """Everything of a pi system message, for the rebuild (its effect is the config)."""
    out: JSONDict = {}
    _keep(
        out,
        content=_content_json(msg.content),
        sections=dict(msg.sections) if msg.sections is not None else None,
        # the prompt's sections in their order (an ASF line sorts members by name)
        section_order=list(msg.sections)
        if msg.sections and list(msg.sections) != sorted(msg.sections)
        else None,
        tools_added=[_tool_json(t) for t in msg.tools_added] if msg.tools_added is not None else None,
        tools_removed=[_tool_json(t) for t in msg.tools_removed] if msg.tools_removed is not None else None,
        timestamp=msg.timestamp,
        extra=dict(msg.extra) if msg.extra else None,
    )
    return out


def _tool_json(spec: ir.ToolSpec) -> JSONDict:
    value = {"name": spec.name, "description": spec.description, "parameters": spec.parameters}
    if spec.extra:
        value["extra"] = dict(spec.extra)
    return {k: v for k, v in value.items() if v is not None}
