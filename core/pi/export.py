"""Any document as a pi session that pi 1.6.0 resumes: ``--to pi`` for a document
another reader made (an ASF file from any writer, a plugin's format).

Each IR entry becomes one pi entry with the same id and parent, so the tree, its
branches, labels and names stay as they were (``docs/formats/pi.md`` maps every body
and message field by field; ``foreign.py`` writes the messages). Then what pi's rules
need that the source said another way:

- **Settings.** pi takes the model and the thinking level from ``model_change`` and
  ``thinking_level_change`` entries (and an assistant message's model). Where the
  source's own context rule puts other settings in force, at a system message or at a
  leaf (ASF's ``config`` sets the model beside the instructions), the settings entries
  are written right after that entry, its children hanging below them
  (``settings-entry-added``), so every leaf keeps its settings and the number of leaves
  stays.
- **The leaf.** pi resumes at the last entry of the file: the source's leaf is written
  last (``leaf-moved-last``).
- **The header**: version 3, the session's id (a UUID made from the first entry's id
  when it has none), its time and working directory.

Finally the context pi will build at the leaf (pi's rule, ``context.py``, over the
entries written) is compared with the source's own, in pi's shape; any difference is
reported (``context-differs``), so the report never says nothing was lost when the
model would see something else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from ..ir import (
    BranchSummary,
    Compaction,
    ContextEdit,
    Document,
    Entry,
    ExtensionState,
    Label,
    MessageBody,
    ModelChange,
    ReasoningLevelChange,
    SessionName,
    SystemMessage,
    UnknownBody,
    UsageRecord,
)
from ..jsonio import dumps
from ..jsonl import MAX_DEPTH, depth_over
from ..report import Report
from .foreign import pi_content, pi_level, pi_message, pi_model, pi_usage

JSONDict = dict[str, Any]
Settings = tuple[Any, str]  # (pi's model object or None, thinking level)
_DEFAULT: Settings = (None, "off")


class _Export:
    """One document on its way to pi: entries as pi values, in writing order."""

    def __init__(self, doc: Document, report: Report) -> None:
        self.doc = doc
        self.report = report
        self.taken = {e.id for e in doc.entries}
        self.values: list[JSONDict] = []  # the pi entries, in writing order
        self.lines: dict[str, int] = {}  # pi id -> the source line it stands for
        self.below: dict[str, str] = {}  # entry id -> the id its children hang below
        self.effect: dict[str, Settings] = {}  # pi id -> settings in force after it

    def note(self, line: int) -> Any:
        def add(code: str, detail: str) -> None:
            self.report.add(code, line or None, detail)

        return add

    # -- entries ----------------------------------------------------------------------
    def entry(self, entry: Entry) -> JSONDict | None:
        """The pi entry for one IR entry (``None``: nothing pi can hold)."""
        note = self.note(entry.origin.line)
        body = entry.body
        cls = type(body)
        out: JSONDict = {"type": "", "id": entry.id, "parentId": self.parent_of(entry)}
        if entry.timestamp is not None:
            out["timestamp"] = entry.timestamp
        if entry.extra and cls is not UnknownBody:
            note("member-not-kept", f"{entry.kind} entry: {', '.join(sorted(map(str, entry.extra)))}")
        if cls is MessageBody:
            message = pi_message(body.message, entry, note)  # type: ignore[union-attr]
            if message is None:
                return self.as_state(entry, out, "message", {"message": body.message.value})  # type: ignore[union-attr]
            out["type"] = "message"
            out["message"] = message
        elif cls is Compaction:
            c: Compaction = body  # type: ignore[assignment]
            out["type"] = "compaction"
            if c.summary is not None:
                out["summary"] = c.summary
            if c.first_kept_id is not None:
                out["firstKeptEntryId"] = c.first_kept_id
            if c.tokens_before is not None:
                out["tokensBefore"] = c.tokens_before
            if c.checkpoint is not None:
                out["systemMessage"] = pi_message(c.checkpoint, entry, note)
            if c.usage is not None:
                out["usage"] = pi_usage(c.usage, "compaction", note)
            if c.details is not None:
                out["details"] = c.details
            if c.by_extension is not None:
                out["fromHook"] = c.by_extension
        elif cls is BranchSummary:
            b: BranchSummary = body  # type: ignore[assignment]
            out["type"] = "branch_summary"
            out["fromId"] = b.from_id if b.from_id is not None else "root"
            out["summary"] = b.summary if b.summary is not None else ""
            if b.usage is not None:
                out["usage"] = pi_usage(b.usage, "branch summary", note)
            if b.details is not None:
                out["details"] = b.details
            if b.by_extension is not None:
                out["fromHook"] = b.by_extension
        elif cls is ModelChange:
            out["type"] = "model_change"
            out.update(pi_model(body) or {})  # type: ignore[arg-type]
        elif cls is ReasoningLevelChange:
            out["type"] = "thinking_level_change"
            out["thinkingLevel"] = pi_level(body.level)  # type: ignore[union-attr]
        elif cls is Label:
            out["type"] = "label"
            out["targetId"] = body.target_id  # type: ignore[union-attr]
            if body.label:  # type: ignore[union-attr]
                out["label"] = body.label  # type: ignore[union-attr]
        elif cls is SessionName:
            out["type"] = "session_info"
            out["name"] = body.name if body.name is not None else ""  # type: ignore[union-attr]
        elif cls is ExtensionState:
            out["type"] = "custom"
            out["customType"] = body.extension_type or ""  # type: ignore[union-attr]
            if body.data is not None:  # type: ignore[union-attr]
                out["data"] = body.data  # type: ignore[union-attr]
        elif cls is ContextEdit:
            e: ContextEdit = body  # type: ignore[assignment]
            out["type"] = "context_edit"
            out["targetId"] = e.target_id
            if e.omit or e.replacement is None:
                if not e.omit:
                    note("context-edit-not-kept", "an edit that names no replacement: written as omitting")
                out["replacement"] = None
            else:
                out["replacement"] = {"content": pi_content(e.replacement, "context edit", note)}
        elif cls is UsageRecord:
            u: UsageRecord = body  # type: ignore[assignment]
            out["type"] = "usage"
            if u.usage_kind is not None:
                out["kind"] = u.usage_kind
            if u.model is not None:
                out.update({k: v for k, v in (("provider", u.model.provider), ("model", u.model.model)) if v})
            out["usage"] = pi_usage(u.usage, "usage", note)
            if u.note is not None:
                out["note"] = u.note
        else:  # an entry of a kind pi has not: its members as an extension's state
            kind = body.type if cls is UnknownBody else None  # type: ignore[union-attr]
            return self.as_state(entry, out, kind or "entry", dict(entry.extra))
        return out

    def as_state(self, entry: Entry, out: JSONDict, kind: str, data: Any) -> JSONDict:
        """An entry pi has no type for, kept as a ``custom`` entry (an extension's state,
        never part of the model's context) named after the source's format and type."""
        fmt = self.doc.session.source_format or "source"
        out["type"] = "custom"
        out["customType"] = f"{fmt}:{kind}"
        out["data"] = data
        self.report.add("entry-as-extension-state", entry.origin.line or None, f"a {fmt} {kind} entry")
        return out

    def parent_of(self, entry: Entry) -> str | None:
        parent = entry.parent_id
        if parent is None:
            return None
        return self.below.get(parent, parent)

    # -- settings ---------------------------------------------------------------------
    def settings_after(self, value: JSONDict, before: Settings) -> Settings:
        """The settings pi has in force after the pi entry ``value``."""
        model, level = before
        kind = value.get("type")
        if kind == "thinking_level_change":
            level = value.get("thinkingLevel")
        elif kind == "model_change":
            model = {k: value[k] for k in ("provider", "modelId") if k in value}
        elif kind == "message" and value["message"].get("role") == "assistant":
            message = value["message"]  # pi: {provider: message.provider, modelId: message.model}
            model = {"provider": message["provider"]} if "provider" in message else {}
            if "model" in message:
                model["modelId"] = message["model"]
        return model, level

    def align(self, entry: Entry, have: Settings) -> Settings:
        """Settings entries after ``entry`` where the source's rule puts others in force
        there; the settings in force below it."""
        try:
            context = self.doc.context(entry.id)
        except (NotImplementedError, KeyError):
            return have
        want_model = pi_model(context.model)
        want_level = pi_level(context.reasoning_level)
        model, level = have
        added: list[JSONDict] = []
        anchor = self.below.get(entry.id, entry.id)
        if want_model is not None and want_model != model:
            added.append({"type": "model_change", "id": self.new_id(entry.id, "model"), **want_model})
        if want_level != level:
            added.append(
                {
                    "type": "thinking_level_change",
                    "id": self.new_id(entry.id, "thinking"),
                    "thinkingLevel": want_level,
                }
            )
        for value in added:
            value["parentId"] = anchor
            if entry.timestamp is not None:
                value["timestamp"] = entry.timestamp
            # the id first, as pi writes it
            value = {
                "type": value.pop("type"),
                "id": value.pop("id"),
                "parentId": value.pop("parentId"),
                **value,
            }
            self.values.append(value)
            self.lines[value["id"]] = entry.origin.line
            anchor = value["id"]
            self.report.add(
                "settings-entry-added",
                entry.origin.line or None,
                f"a {value['type']} after {entry.id}: the source's settings in force there",
            )
        if added:
            self.below[entry.id] = anchor
            self.effect[anchor] = (want_model if want_model is not None else model, want_level)
            return self.effect[anchor]
        return have

    def new_id(self, base: str, what: str) -> str:
        made = f"{base}.{what}"
        while made in self.taken:
            made += "~"
        self.taken.add(made)
        return made

    # -- the whole ----------------------------------------------------------------------
    def build(self) -> str | None:
        """Every entry in writing order (``self.values``); the id pi resumes at."""
        doc = self.doc
        checkpoints = {e.id for e in doc.leaves()}
        if doc.leaf_id is not None:
            checkpoints.add(doc.leaf_id)
        for entry in doc.entries:
            body = entry.body
            if type(body) is MessageBody and type(body.message) is SystemMessage:
                checkpoints.add(entry.id)
        for entry in doc.entries:
            value = self.entry(entry)
            if value is None:
                continue
            if depth_over(value, MAX_DEPTH):  # a pi reader would skip the line: its content goes
                value = {k: value[k] for k in ("type", "id", "parentId", "timestamp") if k in value}
                value.update(type="custom", customType=f"{doc.session.source_format or 'source'}:too-deep")
                self.report.add(
                    "too-deep-not-kept", entry.origin.line or None, f"{entry.kind} entry {entry.id}"
                )
            self.values.append(value)
            self.lines[entry.id] = entry.origin.line
            parent = value.get("parentId")
            before = self.effect.get(parent, _DEFAULT) if parent is not None else _DEFAULT
            after = self.settings_after(value, before)
            self.effect[entry.id] = after
            if entry.id in checkpoints:
                self.align(entry, after)
        if doc.leaf_id is None:
            return None
        leaf = self.below.get(doc.leaf_id, doc.leaf_id)
        if self.values and self.values[-1]["id"] != leaf:
            at = next(i for i, v in enumerate(self.values) if v["id"] == leaf)
            self.values.append(self.values.pop(at))
            self.report.add(
                "leaf-moved-last", self.lines.get(leaf) or None, "pi resumes the last entry of its file"
            )
        return leaf

    def header(self) -> JSONDict:
        info = self.doc.session
        out: JSONDict = {"type": "session", "version": 3}
        session_id = info.id
        if not session_id:
            import uuid

            first = self.doc.entries[0].id if self.doc.entries else ""
            session_id = str(
                uuid.uuid5(uuid.NAMESPACE_URL, f"piconv:{first}".encode("utf-8", "backslashreplace").decode())
            )
            self.report.add("session-id-synthesized", None, f"the source names no session id: {session_id}")
        out["id"] = session_id
        created = info.created or next((e.timestamp for e in self.doc.entries if e.timestamp), None)
        if created is not None:
            out["timestamp"] = created
        if info.cwd is not None:
            out["cwd"] = info.cwd
        else:
            self.report.add("session-cwd-missing", None, "pi lists a session by its working directory")
        if info.parent_session is not None:
            out["parentSession"] = info.parent_session
        return out


def header_of(doc: Document, report: Report) -> JSONDict:
    """A version 3 header for ``doc`` (an id made up when it has none, reported)."""
    return _Export(doc, report).header()


def write_foreign(doc: Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    """``--to pi`` for a document another reader made (see the module's docstring)."""
    export = _Export(doc, report)
    leaf = export.build()
    header = export.header()
    if leaf is not None:
        settle_context(doc, header, export.values, leaf, report)
    validate = bool(options.get("validate"))
    from .written import line_problem

    written = 0
    for value in (header, *export.values):
        data = dumps(value)
        if validate:
            problem = line_problem(value, data, header=written == 0)
            if problem is not None:
                from ..errors import ValidationFailed

                raise ValidationFailed(
                    f"pi output failed validation: line {written + 1}: {problem}", path=report.source
                )
        out.write(data)
        out.write(b"\n")
        written += 1
    report.entries_written = written


def pi_context(header: JSONDict, values: list[JSONDict], leaf: str) -> JSONDict:
    """The context pi builds at ``leaf`` of a file of ``values`` (pi's rule, in pi's shape)."""
    from ..ir import SessionInfo
    from .context import build_context, context_to_pi
    from .entries import load_entry

    entries = tuple(
        load_entry(value, n, value["id"], value.get("parentId")) for n, value in enumerate(values, start=2)
    )
    written = Document(
        session=SessionInfo(id=header["id"], source_format="pi", source_version=3, line=1),
        entries=entries,
        leaf_id=leaf,
        context_builder=build_context,
    )
    return context_to_pi(written.context(leaf))


def settle_context(
    doc: Document, header: JSONDict, values: list[JSONDict], leaf: str, report: Report
) -> None:
    """Compare the context pi will build at ``leaf`` with the source's own, in pi's shape.
    One difference has a remedy: a compaction's checkpoint (its ``systemMessage``) that
    pi would replay where the source's rule shows no instructions any more (a later
    setting replaced them), which is then left out (``checkpoint-not-kept``). Any other
    difference is reported (``context-differs``)."""
    from .context import foreign_context_to_pi

    want = _sorted(foreign_context_to_pi(doc, doc.context()))
    got = pi_context(header, values, leaf)
    if _sorted(got) == want:
        return
    by_id = {v["id"]: v for v in values}
    node = by_id.get(leaf)
    fold = None
    while node is not None and fold is None:
        if node.get("type") == "compaction":
            fold = node
        node = by_id.get(node.get("parentId")) if node.get("parentId") is not None else None
    if fold is not None and "systemMessage" in fold:
        checkpoint = fold.pop("systemMessage")
        retry = pi_context(header, values, leaf)
        if _sorted(retry) == want:
            report.add(
                "checkpoint-not-kept",
                None,
                f"compaction {fold['id']}: the source shows no instructions at the leaf (replaced after the fold)",
            )
            return
        fold["systemMessage"] = checkpoint
    report.add("context-differs", None, _first_difference(got, foreign_context_to_pi(doc, doc.context())))


def _sorted(value: Any) -> bytes:
    return dumps(value, sort_keys=True)


def _first_difference(got: Any, want: Any, path: str = "") -> str:
    """Where pi's context (``got``) first differs from the source's (``want``)."""
    if type(got) is not type(want):
        return f"{path or 'context'}: pi has {dumps(got)[:80]!r}, the source {dumps(want)[:80]!r}"
    if type(got) is dict:
        for key in sorted(set(got) | set(want)):
            if (
                key not in got
                or key not in want
                or dumps(got[key], sort_keys=True) != dumps(want[key], sort_keys=True)
            ):
                return _first_difference(got.get(key), want.get(key), f"{path}.{key}")
    if type(got) is list:
        if len(got) != len(want):
            return f"{path}: pi has {len(got)} items, the source {len(want)}"
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            if dumps(a, sort_keys=True) != dumps(b, sort_keys=True):
                return _first_difference(a, b, f"{path}[{i}]")
    return f"{path or 'context'}: pi has {dumps(got)[:80]!r}, the source {dumps(want)[:80]!r}"
