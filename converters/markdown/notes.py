"""Notes and summaries: what the renderer writes for the entries that are not messages
(settings and bookmarks as short italic notes where they happened), for summaries
(quoted) and for system prompts (collapsed). Plain functions of what they show; the
renderer gives them the references to turns and the rendered text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from piconv import Report
from piconv.ir import (
    ContextEdit,
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


def setting_note(body: Any, ref: Callable[[str | None], str], report: Report, line: int) -> str | None:
    """The note for an entry that is a setting or a bookmark (``ref`` names the entry an
    id points to: a turn, or the entry itself), or None for an entry that shows nothing
    (recorded in ``report`` when it is lost)."""
    if isinstance(body, ModelChange):
        model = "/".join(x for x in (body.provider, body.model) if x) or "unknown"
        return note(f"Model set to {esc.code_span(model, 120)}.")
    if isinstance(body, ReasoningLevelChange):
        return note(f"Thinking level set to {esc.code_span(body.level or 'unknown', 40)}.")
    if isinstance(body, Label):
        if body.label:
            return note(f"Label {esc.code_span(body.label, 120)} set on {ref(body.target_id)}.")
        return note(f"Label cleared on {ref(body.target_id)}.")
    if isinstance(body, SessionName):
        if body.name and body.name.strip():
            return note(f"Session named {esc.code_span(body.name, 200)}.")
        return note("Session name cleared.")
    if isinstance(body, ContextEdit):
        if body.omit:
            return note(f"Context edit: {ref(body.target_id)} hidden from the model from here on.")
        return note(f"Context edit: the model sees {ref(body.target_id)} replaced from here on.")
    if isinstance(body, UsageRecord):
        total = body.usage.total_tokens if body.usage is not None else None
        kind = body.usage_kind or "usage"
        amount = f": {total:,} tokens" if isinstance(total, int) else ""
        return note(f"Model usage recorded ({esc.inline(kind, 40)}){amount}.")
    if isinstance(body, ExtensionState):
        report.add("extension-state", line, body.extension_type)
        return None
    if isinstance(body, UnknownBody):
        report.add("unknown-entry", line, body.type)
        return note(f"Entry of unknown type {esc.code_span(body.type or '?', 80)} not shown.")
    report.add("unknown-entry", line, type(body).__name__)
    return None


def summary(kind: str, body: Block, tokens_before: int | None, abandoned_at: str | None) -> str:
    """A summary quoted under its kind: ``body`` its text as Markdown, ``abandoned_at``
    where the abandoned branch ended (a branch summary's), as a reference."""
    facts = []
    if isinstance(tokens_before, int):
        facts.append(f"{tokens_before:,} tokens before")
    if abandoned_at:
        facts.append(f"the abandoned branch ended at {abandoned_at}")
    head = f"**{kind}**" + (f" ({'; '.join(facts)})" if facts else "")
    if type(body) is not str:
        body = "".join(body)  # (quoted line by line: a copy anyway)
    return esc.quote(f"{head}\n\n{body or '*Empty.*'}") + "\n"


def system_prompt(msg: SystemMessage, line: int, report: Report) -> str:
    """A system prompt, collapsed, its sections and tool changes listed."""
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
        report.add("tool-schemas", line)
    if removed:
        what.append("tools removed: " + ", ".join(removed))
    if added:
        blocks.append("Tools added: " + ", ".join(esc.code_span(n, 80) for n in added) + "\n")
    if removed:
        blocks.append("Tools removed: " + ", ".join(esc.code_span(n, 80) for n in removed) + "\n")
    label = "System prompt" + (f" ({'; '.join(what)})" if what else "")
    return collapsed(esc.summary_text(label, 300), "\n".join(blocks) or note("Empty."))
