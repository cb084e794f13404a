"""The entries that are not messages (settings, bookmarks, summaries, context edits,
usage records), system prompts and summaries, as the renderer writes them: short italic
notes where they happened, summaries quoted, system prompts collapsed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from piconv import Report
from piconv.ir import (
    BranchSummary,
    Compaction,
    ContextEdit,
    Entry,
    ExtensionState,
    Label,
    ModelChange,
    ReasoningLevelChange,
    SessionName,
    SystemMessage,
    Text,
    UnknownBody,
    UsageRecord,
)

from . import escape as esc
from .blocks import Block, collapsed, note, parts


class Notes:
    """The renderer's notes and summaries (a part of :class:`.render.Renderer`, which
    gives the headings, references to turns and message text they use)."""

    report: Report

    if TYPE_CHECKING:  # given by the renderer

        def heading(self, entry: Entry, who: str, out: list[Block]) -> None: ...
        def _ref(self, entry_id: str | None) -> str: ...
        def _text(self, text: str | None) -> Block: ...
        def _content(self, content: Any, line: int) -> list[Block]: ...

    def _summary(self, kind: str, summary: str | None, tokens_before: int | None, from_id: str | None) -> str:
        facts = []
        if isinstance(tokens_before, int):
            facts.append(f"{tokens_before:,} tokens before")
        if from_id:
            facts.append(f"the abandoned branch ended at {self._ref(from_id)}")
        head = f"**{kind}**" + (f" ({'; '.join(facts)})" if facts else "")
        body = self._text(summary) or "*Empty.*"
        if type(body) is not str:
            body = "".join(body)  # (quoted line by line: a copy anyway)
        return esc.quote(f"{head}\n\n{body}") + "\n"

    def _system(self, msg: SystemMessage, line: int) -> str:
        what = []
        blocks = []
        content = msg.content
        text = (
            content
            if isinstance(content, str)
            else "\n\n".join(p.text for p in parts(content) if isinstance(p, Text) and p.text)
        )
        if text:
            blocks.append(esc.fenced(text, "text"))
        for name, section in (msg.sections or {}).items():
            if section is None:
                blocks.append(note(f"Section {esc.code_span(name, 80)} removed."))
            else:
                blocks.append(f"Section {esc.code_span(name, 80)}:\n\n" + esc.fenced(section, "text"))
        if msg.sections:
            what.append("sections " + ", ".join(sorted(msg.sections)))
        added = [t.name or "?" for t in msg.tools_added or ()]
        removed = [t.name or "?" for t in msg.tools_removed or ()]
        if added:
            what.append("tools added: " + ", ".join(added))
            self.report.add("tool-schemas", line)
        if removed:
            what.append("tools removed: " + ", ".join(removed))
        if added:
            blocks.append("Tools added: " + ", ".join(esc.code_span(n, 80) for n in added) + "\n")
        if removed:
            blocks.append("Tools removed: " + ", ".join(esc.code_span(n, 80) for n in removed) + "\n")
        label = "System prompt" + (f" ({'; '.join(what)})" if what else "")
        return collapsed(esc.summary_text(label, 300), "\n".join(blocks) or note("Empty."))

    def _event(self, entry: Entry, body: Any, line: int, out: list[Block]) -> None:
        if isinstance(body, ModelChange):
            model = "/".join(x for x in (body.provider, body.model) if x) or "unknown"
            out.append(note(f"Model set to {esc.code_span(model, 120)}."))
        elif isinstance(body, ReasoningLevelChange):
            out.append(note(f"Thinking level set to {esc.code_span(body.level or 'unknown', 40)}."))
        elif isinstance(body, Label):
            if body.label:
                out.append(
                    note(f"Label {esc.code_span(body.label, 120)} set on {self._ref(body.target_id)}.")
                )
            else:
                out.append(note(f"Label cleared on {self._ref(body.target_id)}."))
        elif isinstance(body, SessionName):
            if body.name and body.name.strip():
                out.append(note(f"Session named {esc.code_span(body.name, 200)}."))
            else:
                out.append(note("Session name cleared."))
        elif isinstance(body, Compaction):
            self.heading(entry, "Compaction", out)
            out.append(self._summary("Compaction summary", body.summary, body.tokens_before, None))
            if body.checkpoint is not None:
                self.report.add("compaction-checkpoint", line)
            if body.details is not None:
                self.report.add("summary-details", line)
        elif isinstance(body, BranchSummary):
            self.heading(entry, "Branch summary", out)
            out.append(self._summary("Branch summary", body.summary, None, body.from_id))
            if body.details is not None:
                self.report.add("summary-details", line)
        elif isinstance(body, ContextEdit):
            if body.omit:
                out.append(
                    note(f"Context edit: {self._ref(body.target_id)} hidden from the model from here on.")
                )
            else:
                out.append(
                    note(f"Context edit: the model sees {self._ref(body.target_id)} replaced from here on.")
                )
                blocks = self._content(body.replacement, line)
                if blocks:
                    text = "\n".join(b if type(b) is str else "".join(b) for b in blocks)
                    out.append(collapsed(esc.summary_text("What the model sees instead"), text))
        elif isinstance(body, UsageRecord):
            total = body.usage.total_tokens if body.usage is not None else None
            kind = body.usage_kind or "usage"
            amount = f": {total:,} tokens" if isinstance(total, int) else ""
            out.append(note(f"Model usage recorded ({esc.inline(kind, 40)}){amount}."))
        elif isinstance(body, ExtensionState):
            self.report.add("extension-state", line, body.extension_type)
        elif isinstance(body, UnknownBody):
            self.report.add("unknown-entry", line, body.type)
            out.append(note(f"Entry of unknown type {esc.code_span(body.type or '?', 80)} not shown."))
        else:
            self.report.add("unknown-entry", line, type(body).__name__)
