"""pi IR → ASF (agentsession/0.11) lines, written as entries arrive.

The mapping, row by row, is ``docs/formats/asf.md``. Every pi entry becomes one or more
ASF entries chained parent → child; the pi id is kept as ``legacy_id`` on each, and every
pi member ASF has no field for is kept in the entry's ``pi`` member. Entries are written
in file order; one whose parent has not been written yet waits for it (pi files are
nearly always in order already, so little is ever held).
"""

from __future__ import annotations

import gc
import hashlib
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

import orjson
from piconv import ir
from piconv.converters.common.system import content_text
from piconv.report import Report

from .checks import Ancestry
from .ids import CanonicalError, canonical_ts, envelope_id_plain, normalise, ts_from_millis
from .items import arguments_text, input_parts, part_json, usage
from .jcs import c_entry as _c_entry
from .jcs import c_entry_line as _c_entry_line
from .jcs import c_link as _c_link
from .jcs import canonical

FORMAT = "agentsession/0.11"
PAYLOAD = "openresponses/2026-04-24"
JSONDict = dict[str, Any]
EPOCH = "1970-01-01T00:00:00Z"
_CALL_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_EFFORT = {"off": "none"}
_sha256 = hashlib.sha256
_LINE = orjson.OPT_APPEND_NEWLINE
_ENVELOPE = frozenset(("type", "id", "parent", "ts"))


@dataclass(frozen=True, slots=True)
class Settings:
    """Request settings in force after a pi entry (shared between entries until changed)."""

    model: str | None = None
    provider: str | None = None
    effort: str | None = None
    level: str | None = None
    content: tuple[str, ...] = ()
    sections: tuple[tuple[str, str], ...] = ()
    tools: tuple[tuple[str | None, JSONDict], ...] = ()

    def instructions(self) -> str:
        parts = ["\n\n".join(self.content)] + [v for _k, v in self.sections]
        return "\n\n".join(p for p in parts if p)

    def full(self) -> JSONDict:
        out: JSONDict = {}
        if self.model is not None:
            out["model"] = self.model
        text = self.instructions()
        if text:
            out["instructions"] = text
        if self.effort is not None:
            out["reasoning"] = {"effort": self.effort}
        if self.tools:
            out["tools"] = [t for _n, t in self.tools]
        if self.provider is not None:
            out["provider"] = self.provider
        return out


_NO_SETTINGS = Settings()  # frozen: one shared instance
_REFERRING = frozenset({"compaction", "branch_summary", "label"})  # entries whose links name other entries
_EDITABLE = (ir.UserMessage, ir.AssistantMessage, ir.ToolResult, ir.ExtensionMessage)  # what pi's context edits change


def _tool(spec: ir.ToolSpec) -> JSONDict:
    tool: JSONDict = {"type": "function", "name": spec.name or ""}
    if spec.description is not None:
        tool["description"] = spec.description
    if spec.parameters is not None:
        tool["parameters"] = spec.parameters
    return tool


def assistant_settings(state: Settings, ref: ir.ModelRef | None) -> Settings:
    """The settings after an assistant message: pi takes the model in force from the last
    assistant message as well as from model changes, so a response from another model
    moves the settings too (``state`` itself when nothing changes)."""
    if ref is not None and (ref.model != state.model or ref.provider != state.provider):
        return Settings(ref.model, ref.provider, state.effort, state.level, state.content, state.sections, state.tools)
    return state


def apply_system(state: Settings, msg: ir.SystemMessage) -> Settings:
    """pi-ai's replay of one system message: content appended, sections patched, tools
    removed then added (a re-added name keeps its place unless removed in between)."""
    content = state.content
    text = content_text(msg.content)  # pi-ai's contentText, shared with the other converters
    if text:
        content = (*content, text)
    sections = dict(state.sections)
    for name, value in (msg.sections or {}).items():
        if value is None:
            sections.pop(name, None)
        elif type(value) is str:
            sections[name] = value
    tools = dict(state.tools)
    for spec in msg.tools_removed or ():
        tools.pop(spec.name, None)
    for spec in msg.tools_added or ():
        tools[spec.name] = _tool(spec)
    return Settings(state.model, state.provider, state.effort, state.level, content, tuple(sections.items()), tuple(tools.items()))


@dataclass
class _Writer:
    out: IO[bytes]
    report: Report
    asf_ids: dict[str, tuple[str, str]] = field(default_factory=dict)  # pi id -> (first, last) ASF id
    item_ids: dict[str, list[str]] = field(default_factory=dict)  # pi id -> its item entries
    editable: set[str] = field(default_factory=set)  # pi ids of written messages a context edit may change
    state: dict[str, Settings] = field(default_factory=dict)
    call_ids: set[str] = field(default_factory=set)
    call_map: dict[str, str] = field(default_factory=dict)
    ancestry: Ancestry = field(default_factory=Ancestry)  # every ASF id written, with its parent
    checker: Any = None  # validate.WriteChecker when validating while writing
    last_ts: str = EPOCH
    written: int = 0
    next_line: int = 1  # the pi line that follows the last pi entry written

    # ------------------------------------------------------------------ output

    def emit(self, type_: str, parent: str | None, ts: str, body: JSONDict, line: int) -> str:
        type_, body, data = self.serialise(type_, body, line)
        made = _c_entry(type_, parent, ts, data) if _c_entry is not None and _ENVELOPE.isdisjoint(body) else None
        if made is not None:
            entry_id, text = made
        else:
            # type_, parent and ts are the writer's own text with nothing to escape in JSON
            # (constants, ids, canonical_ts), so they are spelled directly.
            entry_id = envelope_id_plain(type_, parent, ts, "sha256:" + _sha256(data).hexdigest())
            text = entry_line(type_, entry_id, parent, ts, data, body)
        if self.checker is not None:
            if _ENVELOPE.isdisjoint(body):
                # The body is the writer's own and already serialised: completed in place
                # into the entry, it is checked without a copy.
                body["type"] = type_
                body["id"] = entry_id
                body["parent"] = parent
                body["ts"] = ts
                entry = body
            else:  # a body member named like an envelope member: the body's wins, as written
                entry = {"type": type_, "id": entry_id, "parent": parent, "ts": ts, **body}
            self.checker.shape(entry, self.written + 2)
            # An id new and a parent written (all the links an item, response or config
            # has) are checked as the id joins the ancestry; the rest words a problem.
            if _c_link is None or type_ in _REFERRING or not _c_link(self.ancestry.nodes, entry_id, parent):
                self.checker.links(entry, self.written + 2, self.ancestry)
                self.ancestry.add(entry_id, parent)
        elif _c_link is None or not _c_link(self.ancestry.nodes, entry_id, parent):
            self.ancestry.add(entry_id, parent)
        self.out.write(text)
        self.written += 1
        return entry_id

    def serialise(self, type_: str, body: JSONDict, line: int) -> tuple[str, JSONDict, bytes]:
        """The body's canonical bytes; a body that is not I-JSON is normalised (or, holding
        a number that is not finite, refused) first, which may change its type."""
        try:
            return type_, body, canonical(body)
        except CanonicalError:
            try:
                body, records = normalise(body)
            except CanonicalError as exc:  # non-finite number: the RFC says refuse the entry
                self.report.add("entry-refused", line, str(exc))
                # What is left names no member the entry type requires: a namespaced entry.
                body = {"legacy_id": body.get("legacy_id"), "pi": {"refused": str(exc), "type": type_, "line": line}}
                type_ = "pi:refused"
                records = []
            if records:
                body["normalised"] = records
                self.report.add("value-normalised", line, f"{len(records)} value(s) made I-JSON")
            return type_, body, canonical(body)

    # ------------------------------------------------------------------ helpers

    def ts_of(self, entry: ir.Entry, left: JSONDict) -> str:
        raw = entry.timestamp
        ts = canonical_ts(raw) if raw is not None else None
        if ts is None:
            message = entry.message
            stamp = getattr(message, "timestamp", None) if message is not None else None
            ts = ts_from_millis(stamp) if type(stamp) in (int, float) else None
            ts = ts or self.last_ts
            self.report.add("ts-synthesized", entry.origin.line, f"entry {entry.id}: no RFC 3339 timestamp")
        if raw is None or raw != ts:
            left["timestamp"] = raw  # null: the pi entry had no (string) timestamp
        self.last_ts = ts
        return ts

    def call_id(self, native: str | None, line: int) -> str:
        if native and native not in self.call_ids:
            self.call_ids.add(native)
            self.call_map[native] = native
            return native
        # Empty or already taken (on any branch): one of our own, from the portable alphabet.
        base = _CALL_ID_CHARS.sub("_", native or "") or "call"
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
        pair = self.asf_ids.get(pi_id) if pi_id is not None else None
        return pair[which] if pair else None

    # ------------------------------------------------------------------ entries

    def write_entry(self, entry: ir.Entry) -> None:
        # Runs once per pi entry: attribute chains are read once and ref() is inlined.
        entry_id = entry.id
        parent_id = entry.parent_id
        if parent_id is not None:
            parent_state = self.state.get(parent_id, _NO_SETTINGS) if parent_id else _NO_SETTINGS
            pair = self.asf_ids.get(parent_id)
            parent = pair[1] if pair else None
        else:
            parent_state = _NO_SETTINGS
            parent = None
        origin = entry.origin
        line = origin.line
        left: JSONDict = {}
        if origin.source_type is not None:
            left["type"] = origin.source_type
        if origin.source_role is not None:
            left["role"] = origin.source_role
        if entry.extra:
            left["extra"] = dict(entry.extra)
        if origin.synthesized:
            left["synthesized"] = sorted(origin.synthesized)
        if line != self.next_line:
            left["line"] = line  # out of file order, or after lines not read
        self.next_line = line + 1
        ts = self.ts_of(entry, left)
        lines, state = self.map_body(entry, parent_state, left, parent)
        if parent is None:
            if not lines or lines[0][0] != "config":
                lines.insert(0, ("config", {**parent_state.full()}, False))
            lines[0][1]["replace"] = True  # the first entry of a root carries full settings
        first = last = None
        items: list[str] = []
        final = len(lines) - 1
        emit = self.emit
        for index, (type_, body, is_item) in enumerate(lines):
            body["legacy_id"] = entry_id
            if type_ == "compaction" and body.get("first_kept") == "":
                body["first_kept"] = last  # the anchor just written
            if index == final and left:
                body["pi"] = left
            last = emit(type_, last if last is not None else parent, ts, body, line)
            if first is None:
                first = last
            if is_item:
                items.append(last)
        assert first is not None and last is not None
        self.asf_ids[entry_id] = (first, last)
        if items:
            self.item_ids[entry_id] = items
            if type(entry.message) in _EDITABLE:
                self.editable.add(entry_id)
        self.state[entry_id] = state

    def map_body(self, entry: ir.Entry, state: Settings, left: JSONDict, parent: str | None) -> tuple[list[Any], Settings]:
        body = entry.body
        line = entry.origin.line
        cls = type(body)
        if cls is ir.MessageBody:
            return self.map_message(entry, body.message, state, left)
        if cls is ir.ModelChange:
            new = Settings(body.model, body.provider, state.effort, state.level, state.content, state.sections, state.tools)
            delta: JSONDict = {}
            if body.model is not None:
                delta["model"] = body.model
            if body.provider is not None:
                delta["provider"] = body.provider
            return [("config", delta, False)], new
        if cls is ir.ReasoningLevelChange:
            effort = _EFFORT.get(body.level, body.level) if body.level is not None else None
            new = Settings(state.model, state.provider, effort, body.level, state.content, state.sections, state.tools)
            delta = {"reasoning": {"effort": effort}} if effort is not None else {}
            if body.level is not None and effort != body.level:
                left["level"] = body.level
            return [("config", delta, False)], new
        if cls is ir.Compaction:
            return self.map_compaction(entry, body, state, left, parent), state
        if cls is ir.BranchSummary:
            out: JSONDict = {"from": self.ref(body.from_id) or parent, "summary": _summary_item(body.summary)}
            if self.ref(body.from_id) is None:
                self.report.add("branch-from-unresolved", line, f"fromId {body.from_id!r} names no written entry")
                left["from_id"] = body.from_id
            u = usage(body.usage, left)
            if u is not None:
                out["usage"] = u
            _keep(left, details=body.details, by_extension=body.by_extension, summary_absent=body.summary is None or None)
            return [("branch_summary", out, False)], state
        if cls is ir.Label:
            target = self.ref(body.target_id)
            if target is None:
                self.report.add("ref-unresolved", line, f"label target {body.target_id!r} names no written entry")
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
            _keep(left, kind=body.usage_kind, note=body.note,
                  provider=body.model.provider if body.model else None)
            self.report.add("usage-entry-as-custom", line)
            return [("custom", {"ns": "pi:usage", "data": data}, False)], state
        if cls is ir.ContextEdit:
            return self.map_context_edit(entry, body, left), state
        self.report.add("unknown-entry-type", line, f"pi entry type {entry.origin.source_type!r} kept as a namespaced entry")
        return [("pi:entry", {}, False)], state

    def map_message(self, entry: ir.Entry, msg: ir.Message, state: Settings, left: JSONDict) -> tuple[list[Any], Settings]:
        cls = type(msg)
        line = entry.origin.line
        m: JSONDict = {}
        left["message"] = m
        if getattr(msg, "timestamp", None) is not None:
            m["timestamp"] = msg.timestamp
        if cls is not ir.UnknownMessage and msg.extra:
            m["extra"] = dict(msg.extra)
        if cls is ir.SystemMessage:
            new = apply_system(state, msg)
            delta: JSONDict = {"instructions": new.instructions()}
            if msg.tools_added:
                delta["tools_added"] = [_tool(t) for t in msg.tools_added]
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
                self.report.add("tool-result-unmatched", line, f"toolCallId {msg.call_id!r} matches no tool call")
                call = _CALL_ID_CHARS.sub("_", msg.call_id or "") or "missing"
            if call != msg.call_id:
                m["call_id"] = msg.call_id
            content = msg.content
            if type(content) is str or (content is not None and len(content) == 1 and type(content[0]) is ir.Text):
                text = content if type(content) is str else (content[0].text or "")
                output: Any = text
                if type(content) is str:
                    m["content_form"] = "string"
                elif content[0].signature is not None or content[0].extra or content[0].text is None:
                    m["parts"] = [{"at": 0, "signature": content[0].signature, "extra": dict(content[0].extra),
                                   "text_absent": content[0].text is None}]
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
            for name in ("command", "output", "exit_code", "cancelled", "truncated", "full_output_path", "exclude_from_context"):
                value = getattr(msg, name)
                if value is not None:
                    item[name] = value
            return [("item", {"item": item}, True)], state
        if cls is ir.SummaryMessage:
            _keep(m, kind=msg.kind, tokens_before=msg.tokens_before, from_id=msg.from_id,
                  summary_absent=msg.summary is None or None)
            return [("item", {"item": _summary_item(msg.summary)}, True)], state
        self.report.add("unknown-message-role", line, f"role {msg.role!r} kept as a namespaced item")
        return [("item", {"item": {"type": "pi:message", "value": msg.value}}, True)], state

    def map_assistant(self, entry: ir.Entry, msg: ir.AssistantMessage, state: Settings, m: JSONDict) -> tuple[list[Any], Settings]:
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
                item = {"type": "message", "role": "assistant", "status": "completed", "content": list(text_parts)}
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
                    kept.append({"at": index, "signature": part.signature, "extra": dict(part.extra),
                                 "text_absent": part.text is None})
                continue
            flush()
            if cls is ir.Reasoning:
                item: JSONDict = {"type": "reasoning", "summary": []}
                if part.text:
                    item["summary"] = [{"type": "summary_text", "text": part.text}]
                if part.signature is not None:
                    item["encrypted_content"] = part.signature
                if part.redacted is not None or part.extra or part.text == "":
                    kept.append({"at": index, "redacted": part.redacted, "extra": dict(part.extra), "text": part.text})
                lines.append(("item", {"item": item, "response": response_id}, True))
            elif cls is ir.ToolCall:
                call = self.call_id(part.call_id, line)
                item = {"type": "function_call", "call_id": call, "name": part.name or "",
                        "arguments": arguments_text(part.arguments)}
                if (call != part.call_id or part.signature is not None or part.namespace is not None or part.extra
                        or type(part.arguments) is not dict or part.name is None):
                    kept.append({"at": index, "call_id": part.call_id, "signature": part.signature,
                                 "namespace": part.namespace, "extra": dict(part.extra),
                                 "arguments_type": type(part.arguments).__name__, "name_absent": part.name is None})
                lines.append(("item", {"item": item, "response": response_id}, True))
            else:
                self.report.add("unknown-part", line, f"assistant part {getattr(part, 'type', None)!r} kept aside")
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
        response["status"] = {"error": "failed", "aborted": "incomplete", "length": "incomplete"}.get(stop or "", "completed")
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

    def map_compaction(self, entry: ir.Entry, body: ir.Compaction, state: Settings, left: JSONDict, parent: str | None) -> list[Any]:
        line = entry.origin.line
        lines: list[Any] = []
        # firstKeptEntryId on the pi path to the parent <=> its last ASF entry on the ASF
        # path to the parent's last (each pi entry is a chain hung below its parent's last).
        pair = self.asf_ids.get(body.first_kept_id) if body.first_kept_id is not None else None
        first_kept = pair[0] if pair is not None else None
        if pair is None or not self.ancestry.on_path(pair[1], parent):
            # pi keeps nothing before the summary here (firstKeptEntryId is the compaction
            # itself or not on the path): an anchor entry that carries no context stands
            # for "from here", since an id cannot name the entry it is part of.
            self.report.add("compaction-anchor", line, f"firstKeptEntryId {body.first_kept_id!r}: nothing kept")
            lines.append(("custom", {"ns": "piconv", "data": {"anchor": "compaction-first-kept"}}, False))
            left["first_kept_id"] = body.first_kept_id
            first_kept = None
        checkpoint = state
        if body.checkpoint is not None:
            checkpoint = apply_system(Settings(state.model, state.provider, state.effort, state.level), body.checkpoint)
            left["checkpoint"] = _system_json(body.checkpoint)
        out: JSONDict = {"first_kept": first_kept or "", "summary": _summary_item(body.summary), "config": checkpoint.full()}
        if type(body.tokens_before) is int:
            out["tokens_before"] = body.tokens_before
        elif body.tokens_before is not None:
            left["tokens_before"] = body.tokens_before
        u = usage(body.usage, left)
        if u is not None:
            out["usage"] = u
        _keep(left, details=body.details, by_extension=body.by_extension, summary_absent=body.summary is None or None)
        lines.append(("compaction", out, False))
        return lines

    def map_context_edit(self, entry: ir.Entry, body: ir.ContextEdit, left: JSONDict) -> list[Any]:
        line = entry.origin.line
        targets = self.item_ids.get(body.target_id or "", [])
        left["target_id"] = body.target_id
        if body.omit and targets:
            return [("config", {"omit": {"items": list(targets)}}, False)]
        if body.omit:
            left["omit"] = True
        elif body.replacement is not None:
            if targets and body.target_id in self.editable:
                # The target's items keep their kind; their content becomes the replacement
                # (RFC 0001 extension entry, honoured by context.py: see asf.md).
                form: JSONDict = {}
                replacement = input_parts(body.replacement, form)
                if form:
                    left["replacement_form"] = form
                return [("pi:context_edit", {"target": self.ref(body.target_id), "items": list(targets),
                                             "replacement": replacement}, False)]
            left["replacement"] = _content_json(body.replacement)
        self.report.add("context-edit-not-applied", line,
                        "a context edit naming no item of a message pi can edit has no ASF form; kept as pi:context_edit")
        return [("pi:context_edit", {"target": self.ref(body.target_id)}, False)]


def entry_line(type_: str, entry_id: str, parent: str | None, ts: str, data: bytes, body: JSONDict) -> bytes:
    """One output line: the envelope, then the members of the body whose canonical bytes
    are ``data`` (already made for the hash), so each entry is serialised once."""
    if _ENVELOPE.isdisjoint(body):
        text = _c_entry_line(type_, entry_id, parent, ts, data) if _c_entry_line is not None else None
        if text is None:
            parent_json = "null" if parent is None else f'"{parent}"'
            head = f'{{"type":"{type_}","id":"{entry_id}","parent":{parent_json},"ts":"{ts}"'.encode()
            tail = memoryview(data)[1:]  # the body's members and its "}"
            text = head + b"}\n" if len(data) == 2 else b"".join((head, b",", tail, b"\n"))
        return text
    # a body member named like an envelope member: written as before (the body's wins)
    return orjson.dumps({"type": type_, "id": entry_id, "parent": parent, "ts": ts, **body}, option=_LINE)


def _keep(left: JSONDict, **members: Any) -> None:
    for key, value in members.items():
        if value is not None:
            left[key] = value


def _summary_item(summary: str | None) -> JSONDict:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary or ""}]}


def _content_json(content: ir.Content | None) -> Any:
    if content is None or type(content) is str:
        return content
    return [part_json(part) for part in content]


def _system_json(msg: ir.SystemMessage) -> JSONDict:
    """Everything of a pi system message, for the rebuild (its effect is the config)."""
    out: JSONDict = {}
    _keep(out, content=_content_json(msg.content), sections=dict(msg.sections) if msg.sections is not None else None,
          tools_added=[_tool_json(t) for t in msg.tools_added] if msg.tools_added is not None else None,
          tools_removed=[_tool_json(t) for t in msg.tools_removed] if msg.tools_removed is not None else None,
          timestamp=msg.timestamp, extra=dict(msg.extra) if msg.extra else None)
    return out


def _tool_json(spec: ir.ToolSpec) -> JSONDict:
    value = {"name": spec.name, "description": spec.description, "parameters": spec.parameters}
    if spec.extra:
        value["extra"] = dict(spec.extra)
    return {k: v for k, v in value.items() if v is not None}


def header_of(info: ir.SessionInfo, entries: Iterable[ir.Entry]) -> JSONDict:
    """The ASF header for pi's header ``info``. ``entries`` (in file order) is read only as
    far as needed: the first entry's id stands in for a missing session id, the first RFC
    3339 timestamp for a missing creation time."""
    session_id = info.id
    if session_id is None:
        first = next(iter(entries), None)
        session_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"piconv:{first.id if first is not None else ''}"))
    created = canonical_ts(info.created) if info.created else None
    if created is None:
        created = next((canonical_ts(e.timestamp) for e in entries if e.timestamp and canonical_ts(e.timestamp)), EPOCH)
    out: JSONDict = {
        "type": "session",
        "format": FORMAT,
        "id": session_id,
        "created_at": created,
        "payload": PAYLOAD,
        "harness": {"name": "pi", "version": f"session-v{info.source_version}" if info.source_version else "unknown"},
    }
    if info.cwd is not None:
        out["cwd"] = info.cwd
    if info.parent_session is not None:
        out["parent_session"] = info.parent_session
    left: JSONDict = {}
    if info.created != created:
        left["timestamp"] = info.created  # null: the header had no (string) timestamp
    if info.id is None:
        left["id_synthesized"] = True
    elif not info.id:
        left["id"] = info.id
    if info.line != 1:
        left["line"] = info.line  # 0: the file had no header line
    if info.extra:
        left["extra"] = dict(info.extra)
    if info.other_headers:
        left["other_headers"] = [{"line": ln, "value": v} for ln, v in info.other_headers]
    if left:
        out["pi"] = left
    return out


def write_asf(doc: ir.Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    """The registry's write function: ``doc`` as an ASF file on ``out``, each entry
    written as soon as it is made. With ``options["validate"]`` every line is checked
    before it is written (``validate.WriteChecker``); a failure raises
    :class:`piconv.ValidationFailed` naming the output line."""
    with _CollectorPaused():
        _write_document(doc, out, options, report)


def write_asf_stream(stream: Any, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    """The registry's stream write function: the file :func:`write_asf` makes of the whole
    document, from a session read entry by entry (``piconv.stream.SessionStream``, which
    yields every parent before its children). Each entry is freed once written."""
    with _CollectorPaused():
        ahead = _Lookahead(iter(stream))
        split = _first_part(stream, options)
        worker = None
        if split is not None:
            from .parallel import Worker

            worker = Worker(stream, split, options)  # started before anything is written
        try:
            writer = _start(stream.session, ahead, out, options, report)
            if worker is not None:
                worker.join(ahead.drain(), writer, report)
            else:
                write = writer.write_entry
                for entry in ahead.drain() if ahead.held else ahead.source:
                    write(entry)
        finally:
            if worker is not None:
                worker.close()
        report.entries_written = writer.written


def _first_part(stream: Any, options: Mapping[str, Any]) -> tuple[int, int] | None:
    """When ``options["jobs"]`` asks for a second process (2 or more; ``None``: when it
    helps, see :mod:`piconv.processes`), for a large file read from a path or bytes whose
    header needs no entry read ahead: the last line of the part this process writes
    itself and the byte offset of the next (the rest goes to a second process);
    otherwise ``None``."""
    from piconv.processes import fork_available, wants_second_process

    info = stream.session
    source = getattr(stream, "source", None)
    if info.id is None or not info.created or canonical_ts(info.created) is None:
        return None  # the header reads entries ahead (see header_of)
    if not isinstance(source, (str, bytes, bytearray)) or not fork_available():
        return None
    if not wants_second_process(options.get("jobs", 1)):
        return None
    from .parallel import FIRST_SHARE, split_line

    return split_line(source, FIRST_SHARE)


class _CollectorPaused:
    """The writer makes several small dicts per entry and frees them at once; none forms a
    cycle. With the cyclic collector on, its passes over the live IR cost ~20% of write."""

    def __enter__(self) -> None:
        self.collecting = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.collecting:
            gc.enable()


class _Lookahead:
    """The entries of a stream; those read ahead for the header are held until written."""

    def __init__(self, entries: Iterator[ir.Entry]) -> None:
        self.source = entries
        self.held: list[ir.Entry] = []

    def __iter__(self) -> Iterator[ir.Entry]:
        index = 0
        while True:
            if index == len(self.held):
                entry = next(self.source, None)
                if entry is None:
                    return
                self.held.append(entry)
            yield self.held[index]
            index += 1

    def drain(self) -> Iterator[ir.Entry]:
        """Every entry once, in file order: the held ones, then the rest of the stream."""
        held, self.held = self.held, []
        yield from held
        del held
        yield from self.source


def _start(info: ir.SessionInfo, entries: Iterable[ir.Entry], out: IO[bytes], options: Mapping[str, Any], report: Report) -> _Writer:
    """Write the header line; the writer for the entries that follow."""
    checker = None
    if options.get("validate"):
        from .validate import WriteChecker

        checker = WriteChecker(info.source_path)
    head = header_of(info, entries)
    try:
        canonical(head)
    except CanonicalError:  # pi's header may hold lone surrogates or big whole numbers too
        try:
            head, records = normalise(head)
            head["normalised"] = records
            report.add("value-normalised", info.line or None, f"{len(records)} header value(s) made I-JSON")
        except CanonicalError as exc:  # a number that is not finite: written as orjson spells it (null)
            report.add("value-normalised", info.line or None, f"header: {exc}")
    if checker is not None:
        checker.header(head)
    out.write(orjson.dumps(head, option=_LINE))
    if info.other_headers:
        report.add("extra-header-kept", None, f"{len(info.other_headers)} further header line(s) kept in the header's pi member")
    return _Writer(out, report, checker=checker, next_line=info.line + 1)


def _write_document(doc: ir.Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    writer = _start(doc.session, doc.entries, out, options, report)
    waiting: dict[str, list[ir.Entry]] = {}
    present = {e.id for e in doc.entries}

    def write_with_children(entry: ir.Entry) -> None:
        stack = [entry]
        while stack:
            current = stack.pop()
            writer.write_entry(current)
            stack.extend(reversed(waiting.pop(current.id, [])))

    for entry in doc.entries:
        parent = entry.parent_id
        if parent is not None and parent not in writer.asf_ids and parent in present:
            waiting.setdefault(parent, []).append(entry)  # parents must precede children
            report.add("entry-reordered", entry.origin.line)
            continue
        if parent is not None and parent not in present:
            report.add("parent-missing", entry.origin.line, f"parentId {parent!r} names no entry: written as a root")
        write_with_children(entry)
    for parent_id, children in list(waiting.items()):  # a cycle the core left: break it
        for child in children:
            report.add("parent-cycle", child.origin.line)
            if child.id not in writer.asf_ids:
                write_with_children(child)
        waiting.pop(parent_id, None)
    report.entries_written = writer.written
