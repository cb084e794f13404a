"""One tree entry → one ``<article>`` (or a one-line note for settings changes).

Each entry carries its deep-link anchor (``id="e-…"``), a permalink, its timestamp and
its label when one is set. Tool results are drawn inside the tool call that asked for
them (see page.Pairing); the result's own entry then renders as nothing but keeps its
anchor inside the call.
"""

from __future__ import annotations

from typing import Protocol

from piconv.converters.common.system import render_update, system_text
from piconv.ir import (
    AssistantMessage,
    BranchSummary,
    Compaction,
    ContextEdit,
    Entry,
    ExtensionMessage,
    ExtensionState,
    Label,
    MessageBody,
    ModelChange,
    Reasoning,
    ReasoningLevelChange,
    SessionName,
    ShellCommand,
    SummaryMessage,
    SystemMessage,
    ToolCall,
    ToolResult,
    UnknownBody,
    UnknownMessage,
    UsageRecord,
    UserMessage,
)

from .blocks import Ctx, collapsible, content_html, content_text, json_block, reasoning
from .escape import anchor
from .escape import text as esc
from .tools import orphan_result, tool_call


class Pairing(Protocol):
    def result_for(self, entry: Entry, k: int) -> tuple[ToolResult, str] | None: ...
    def is_paired(self, entry: Entry) -> bool: ...


def _meta(ctx: Ctx, entry: Entry, role: str, label: str | None, extra: str = "") -> str:
    aid = anchor(entry.id)
    ts = ctx.clock.entry(entry.timestamp)
    lab = f' <span class="label">{esc(label)}</span>' if label else ""
    return (
        f'<header class="meta"><span class="role">{role}</span>{lab}{extra}'
        f'<a class="permalink" href="#{aid}">#</a>{ts}</header>'
    )


def _article(
    ctx: Ctx, entry: Entry, cls: str, role: str, label: str | None, body: str, extra: str = ""
) -> str:
    return f'<article class="entry {cls}" id="{anchor(entry.id)}">{_meta(ctx, entry, role, label, extra)}{body}</article>'


def _note(entry: Entry, cls: str, html: str, label: str | None) -> str:
    lab = f' <span class="label">{esc(label)}</span>' if label else ""
    aid = anchor(entry.id)
    return f'<p class="entry note-line {cls}" id="{aid}">{html}{lab} <a class="permalink" href="#{aid}">#</a></p>'


def _link(target: str | None) -> str:
    if not isinstance(target, str):
        return '<span class="invalid">[no target]</span>'
    return f'<a href="#{anchor(target)}">{esc(target)}</a>'


def _tokens(n: int | None) -> str:
    return f"{n:,}" if isinstance(n, int) else "?"


def _assistant(ctx: Ctx, entry: Entry, msg: AssistantMessage, pairs: Pairing, label: str | None) -> str:
    parts: list[str] = []
    calls: list[str] = []
    for part in msg.content or ():
        if isinstance(part, Reasoning):
            parts.append(reasoning(ctx, part))
        elif isinstance(part, ToolCall):
            found = pairs.result_for(entry, len(calls))
            calls.append(tool_call(ctx, part, found[0] if found else None, found[1] if found else None))
        else:
            parts.append(content_html(ctx, (part,), markdown=True))
    if msg.stop_reason == "aborted":
        parts.append('<p class="error-text">Aborted</p>')
    elif msg.stop_reason == "error" or msg.error_message:
        parts.append(f'<p class="error-text">Error: {esc(msg.error_message or "unknown error")}</p>')
    model = ""
    if msg.model is not None and (msg.model.model or msg.model.provider):
        name = "/".join(x for x in (msg.model.provider, msg.model.model) if isinstance(x, str))
        model = f' <span class="model">{esc(name)}</span>'
    return _article(ctx, entry, "assistant", "Assistant", label, "".join(parts) + "".join(calls), model)


def _system(ctx: Ctx, entry: Entry, msg: SystemMessage, label: str | None) -> str:
    """The prompt as one block, as pi's page draws it: collapsed to its first lines, the
    rest (section by section, each named) one click away and printed whole. A later
    system entry on the same branch is drawn as the update it is."""
    parts: list[str] = []
    leading = entry.id in ctx.leading_system
    text = system_text(msg) if leading else render_update(msg)
    if text:
        body = _prompt_body(ctx, msg)
        title = "System prompt" if leading else f"System prompt update{_changes(msg)}"
        parts.append(collapsible(ctx, title, text, cls="output system-prompt", body_html=body))
    elif msg.sections:  # sections that say nothing (removed, or empty)
        parts.append(f'<p class="note">{_prompt_body(ctx, msg, pre=False)}</p>')
    if msg.tools_added:
        items = "".join(
            f'<li><span class="tool-name">{esc(t.name or "?")}</span> {esc(t.description or "")}</li>'
            for t in msg.tools_added
        )
        parts.append(
            f'<details class="tools-list"><summary>Tools added ({len(msg.tools_added)})</summary><ul>{items}</ul></details>'
        )
    if msg.tools_removed:
        items = "".join(f"<li>{esc(t.name or '?')}</li>" for t in msg.tools_removed)
        parts.append(
            f'<details class="tools-list"><summary>Tools removed ({len(msg.tools_removed)})</summary><ul>{items}</ul></details>'
        )
    return _article(ctx, entry, "system", "System", label, "".join(parts))


def _prompt_body(ctx: Ctx, msg: SystemMessage, pre: bool = True) -> str:
    """The prompt's content, then each section under its name (a removed one said so)."""
    out: list[str] = []
    text = content_text(msg.content) if msg.content is not None else ""
    if text:
        out.append(ctx.highlighter.block(text, None, cls="prompt"))
    for name, value in (msg.sections or {}).items():
        if value is None:
            out.append(f'<span class="section-name">Section <code>{esc(name)}</code> removed.</span> ')
        elif value:
            head = f'<span class="section-name">Section <code>{esc(name)}</code></span>'
            out.append(head + (ctx.highlighter.block(value, None, cls="prompt") if pre else " "))
        else:
            out.append(f'<span class="section-name">Section <code>{esc(name)}</code> (empty).</span> ')
    return "".join(out)


def _changes(msg: SystemMessage) -> str:
    """What a later system entry changes: ``: instructions, rules, -docs, tools +bash``."""
    parts: list[str] = []
    if content_text(msg.content):
        parts.append("instructions")
    parts.extend(name if value is not None else f"-{name}" for name, value in (msg.sections or {}).items())
    tools = [f"+{t.name or '?'}" for t in msg.tools_added or ()]
    tools += [f"-{t.name or '?'}" for t in msg.tools_removed or ()]
    if tools:
        parts.append("tools " + " ".join(tools))
    return f": {esc(', '.join(parts))}" if parts else ""


def _message(ctx: Ctx, entry: Entry, msg: object, pairs: Pairing, label: str | None) -> str:
    if isinstance(msg, UserMessage):
        return _article(ctx, entry, "user", "User", label, content_html(ctx, msg.content, markdown=True))
    if isinstance(msg, AssistantMessage):
        return _assistant(ctx, entry, msg, pairs, label)
    if isinstance(msg, ToolResult):
        if pairs.is_paired(entry):
            return ""  # drawn inside its tool call, which carries this entry's anchor
        return _article(ctx, entry, "tool-result", "Tool result", label, orphan_result(ctx, msg))
    if isinstance(msg, ShellCommand):
        code = msg.exit_code
        status = "cancelled" if msg.cancelled else f"exit {code}" if isinstance(code, int) else ""
        bad = bool(msg.cancelled) or (isinstance(code, int) and code != 0)
        exit_html = f' <span class="exit {"bad" if bad else "ok"}">{status}</span>' if status else ""
        cmd = msg.command or ""
        body = ctx.highlighter.block(cmd, "bash", cls="hl cmd")
        if msg.output:
            body += collapsible(ctx, "Output", msg.output, cls="output error" if bad else "output")
        elif ctx.output_left_out:
            body += '<p class="note left-out">Output left out.</p>'
        if msg.truncated:
            path = f" (full output: {esc(msg.full_output_path)})" if msg.full_output_path else ""
            body += f'<p class="note">Output truncated{path}.</p>'
        if msg.exclude_from_context:
            body += '<p class="note">Not sent to the model.</p>'
        return _article(ctx, entry, "shell", "User shell", label, body, exit_html)
    if isinstance(msg, ExtensionMessage):
        kind = f' <span class="ext-type">[{esc(msg.extension_type or "?")}]</span>'
        hidden = " hidden-msg" if msg.display is False else ""
        note = (
            '<p class="note">Hidden in the terminal; sent to the model.</p>' if msg.display is False else ""
        )
        body = note + content_html(ctx, msg.content, markdown=True)
        if msg.details is not None:
            body += json_block(ctx, "Details", msg.details)
        return _article(ctx, entry, "extension" + hidden, "Extension", label, body, kind)
    if isinstance(msg, SummaryMessage):
        title = "Branch summary" if msg.kind == "branch" else "Compaction summary"
        return _article(
            ctx, entry, "summary", title, label, f'<div class="md">{ctx.markdown(msg.summary or "")}</div>'
        )
    if isinstance(msg, SystemMessage):
        return _system(ctx, entry, msg, label)
    value = msg.value if isinstance(msg, UnknownMessage) else None
    role = msg.role if isinstance(msg, UnknownMessage) else None
    return _article(
        ctx,
        entry,
        "unknown",
        "Message",
        label,
        json_block(ctx, f"Unknown role <code>{esc(str(role))}</code>", value),
    )


def render_entry(ctx: Ctx, entry: Entry, pairs: Pairing, label: str | None) -> str:
    body = entry.body
    if isinstance(body, MessageBody):
        return _message(ctx, entry, body.message, pairs, label)
    if isinstance(body, Compaction):
        summary = f'<div class="md">{ctx.markdown(body.summary or "")}</div>'
        kept = f" First kept entry: {_link(body.first_kept_id)}." if body.first_kept_id else ""
        head = f"Compaction &#183; {_tokens(body.tokens_before)} tokens before"
        inner = f'<details class="summary-block"><summary>{head}</summary><p class="note">Older history was replaced by this summary.{kept}</p>{summary}</details>'
        return _article(ctx, entry, "compaction", "Compaction", label, inner)
    if isinstance(body, BranchSummary):
        src = (
            f'<p class="note">Summary of the branch that ended at {_link(body.from_id)}.</p>'
            if body.from_id
            else ""
        )
        return _article(
            ctx,
            entry,
            "branch-summary",
            "Branch summary",
            label,
            src + f'<div class="md">{ctx.markdown(body.summary or "")}</div>',
        )
    if isinstance(body, ModelChange):
        name = "/".join(x for x in (body.provider, body.model) if isinstance(x, str)) or "?"
        return _note(entry, "model-change", f'Model: <span class="model">{esc(name)}</span>', label)
    if isinstance(body, ReasoningLevelChange):
        return _note(entry, "level-change", f"Thinking level: {esc(body.level or '?')}", label)
    if isinstance(body, Label):
        what = f"&#8220;{esc(body.label)}&#8221;" if body.label else "cleared"
        return _note(entry, "label-entry", f"Label {what} on {_link(body.target_id)}", label)
    if isinstance(body, SessionName):
        return _note(entry, "session-name", f"Session name: &#8220;{esc(body.name or '')}&#8221;", label)
    if isinstance(body, ContextEdit):
        if body.omit:
            return _note(
                entry,
                "context-edit",
                f"Context edit: {_link(body.target_id)} hidden from the model from here on",
                label,
            )
        text = content_text(body.replacement)
        inner = collapsible(
            ctx,
            f"Context edit: {_link(body.target_id)} replaced for the model",
            text,
            cls="output",
            force_closed=True,
        )
        return _article(ctx, entry, "context-edit", "Context edit", label, inner)
    if isinstance(body, ExtensionState):
        title = f"Extension state <code>{esc(body.extension_type or '?')}</code>"
        return _article(ctx, entry, "ext-state", "Extension state", label, json_block(ctx, title, body.data))
    if isinstance(body, UsageRecord):
        u = body.usage
        tokens = f"{_tokens(u.input_tokens)} in, {_tokens(u.output_tokens)} out" if u is not None else "?"
        return _note(entry, "usage", f"Usage ({esc(body.usage_kind or '?')}): {tokens}", label)
    if isinstance(body, UnknownBody):
        title = f"Unknown entry type <code>{esc(str(body.type))}</code>"
        return _article(ctx, entry, "unknown", "Entry", label, json_block(ctx, title, dict(entry.extra)))
    return ""
