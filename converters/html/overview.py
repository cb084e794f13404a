"""The tree overview: every entry of the session as one line, nested at branch points.

Drawn on the server as nested lists of links, so it works without JavaScript: each line
links to its entry's anchor, and following the link opens the ``<details>`` branches
around that entry. A run of entries with one child each is one ``<ol class="ov-run">``;
a branch point ends its run with an ``<li class="ov-fork">`` holding one
``<li class="ov-branch">`` per child, each with the child's run. Lines carry classes the
page's filters read (``k-user``, ``k-asst``, ``k-tool``, ``k-set``, ``k-other``;
``quiet`` for an assistant message with nothing but tool calls, ``lab`` for a labelled
entry), ``cur`` on the path to the open leaf and ``leaf`` on the leaf itself.

One pass over the entries, iterative (no recursion, whatever the depth), each line cut to
a short preview before any whitespace is normalised: time and size are linear in the
number of entries, and a huge message costs no more than a small one. Nesting deeper than
``MAX_NESTING`` branch levels continues at the same depth (browsers flatten deeper
markup).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from piconv.converters.common.paths import home_short
from piconv.ir import (
    AssistantMessage,
    BranchSummary,
    Compaction,
    Content,
    ContextEdit,
    Document,
    Entry,
    ExtensionMessage,
    ExtensionState,
    Label,
    MessageBody,
    ModelChange,
    ReasoningLevelChange,
    SessionName,
    ShellCommand,
    SummaryMessage,
    SystemMessage,
    Text,
    ToolCall,
    ToolResult,
    UserMessage,
)

from .blocks import has_text
from .escape import anchor
from .escape import text as esc
from .tree import MAX_NESTING

PREVIEW = 80
FILTERS = (
    ("default", "Default", "everything but settings entries"),
    ("no-tools", "No tools", "default without tool results"),
    ("user", "User", "user messages only"),
    ("labeled", "Labeled", "labelled entries only"),
    ("all", "All", "every entry"),
)
_ARG_KEYS = ("path", "file_path", "command", "pattern", "query", "url")
_PATH_KEYS = frozenset({"path", "file_path"})  # shown with the home directory as ~


def snip(s: str, n: int = PREVIEW) -> str:
    """``s`` on one line, at most ``n`` characters. Only a prefix is looked at, so the
    cost does not grow with the length of ``s``."""
    s = " ".join(s[: n * 4].split())
    return s if len(s) <= n else s[: n - 3] + "..."


def _first_text(content: Content | None) -> str:
    if isinstance(content, str):
        return content
    for part in content or ():
        if isinstance(part, Text) and isinstance(part.text, str) and has_text(part.text):
            return part.text
    return ""


def _call_line(call: ToolCall | None, name: str | None) -> str:
    name = call.name if call is not None and isinstance(call.name, str) else name or "tool"
    args = call.arguments if call is not None else None
    if isinstance(args, dict):
        for key in _ARG_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                shown = home_short(value) if key in _PATH_KEYS else value
                return f"{name}: {snip(shown, 60)}"
    return name


def _line(entry: Entry, calls: Mapping[str, ToolCall]) -> tuple[str, str, str]:
    """(filter class, role, preview text) of one entry."""
    body = entry.body
    if isinstance(body, MessageBody):
        msg = body.message
        if isinstance(msg, UserMessage):
            return "k-user", "user", snip(_first_text(msg.content)) or "(no text)"
        if isinstance(msg, AssistantMessage):
            text = snip(_first_text(msg.content))
            if msg.stop_reason == "aborted":
                text = text or "(aborted)"
            elif msg.stop_reason == "error" or msg.error_message:
                text = text or snip(f"error: {msg.error_message or 'unknown'}")
            if text:
                return "k-asst", "assistant", text
            names = [p.name or "?" for p in msg.content or () if isinstance(p, ToolCall)]
            return "k-asst quiet", "assistant", snip("calls " + ", ".join(names)) if names else "(no text)"
        if isinstance(msg, ToolResult):
            call = calls.get(msg.call_id) if isinstance(msg.call_id, str) else None
            text = _call_line(call, msg.tool_name)
            return "k-tool" + (" err" if msg.is_error else ""), "tool", text
        if isinstance(msg, ShellCommand):
            return "k-other", "shell", snip(msg.command or "")
        if isinstance(msg, ExtensionMessage):
            return "k-other", msg.extension_type or "extension", snip(_first_text(msg.content))
        if isinstance(msg, SummaryMessage):
            return "k-other", f"{msg.kind} summary", snip(msg.summary or "")
        if isinstance(msg, SystemMessage):
            return "k-other", "system", "prompt" if msg.content is not None else "update"
        return "k-other", "message", ""
    if isinstance(body, Compaction):
        tokens = f"{body.tokens_before:,} tokens before" if isinstance(body.tokens_before, int) else ""
        return "k-other", "compaction", tokens
    if isinstance(body, BranchSummary):
        return "k-other", "branch summary", snip(body.summary or "")
    if isinstance(body, ModelChange):
        return "k-set", "model", "/".join(x for x in (body.provider, body.model) if isinstance(x, str))
    if isinstance(body, ReasoningLevelChange):
        return "k-set", "thinking", body.level or ""
    if isinstance(body, Label):
        return "k-set", "label", snip(body.label or "cleared")
    if isinstance(body, ContextEdit):
        return "k-set", "context edit", "omit" if body.omit else "replace"
    if isinstance(body, ExtensionState):
        return "k-set", "state", snip(body.extension_type or "")
    if isinstance(body, SessionName):
        return "k-other", "name", snip(body.name or "")
    return "k-other", entry.kind, ""


def tool_calls(doc: Document) -> dict[str, ToolCall]:
    calls: dict[str, ToolCall] = {}
    for e in doc.entries:
        msg = e.message
        if isinstance(msg, AssistantMessage):
            for part in msg.content or ():
                if isinstance(part, ToolCall) and isinstance(part.call_id, str):
                    calls.setdefault(part.call_id, part)
    return calls


def write_overview(
    doc: Document,
    kids: Mapping[str | None, list[Entry]],
    on_path: set[str],
    leaf_id: str | None,
    labels: Mapping[str, str],
    emit: Callable[[str], Any],
) -> None:
    """Emit the overview (``<details class="overview">``) through ``emit``."""
    calls = tool_calls(doc)
    buttons = "".join(
        f'<button type="button" data-act="f-{key}" title="{tip}">{name}</button>'
        for key, name, tip in FILTERS
    )
    emit(
        '<details class="overview" id="overview"><summary>Session tree '
        f'<span class="count">({len(doc.entries):,} entries)</span></summary>'
        '<div class="ov-tools" id="ov-tools" hidden>'
        '<input type="search" id="search" placeholder="Search (/)" aria-label="Search the session">'
        '<span id="search-status" class="count"></span>'
        f'<div class="filters">{buttons}</div></div>'
    )
    out: list[str] = []
    add = out.append
    seen: set[str] = set()

    def line(e: Entry, fork: int) -> None:
        seen.add(e.id)
        cls, role, text = _line(e, calls)
        if e.id in on_path:
            cls += " cur"
        if e.id == leaf_id:
            cls += " leaf"
        lab = labels.get(e.id)
        label = ""
        if lab:
            cls += " lab"
            label = f'<span class="label">{esc(lab)}</span> '
        mark = f' <span class="fork">{fork} branches</span>' if fork > 1 else ""
        add(
            f'<li class="{cls}"><a href="#{anchor(e.id)}">{label}<span class="r">{esc(role)}</span> '
            f"{esc(text)}{mark}</a></li>"
        )

    # A stack of work: a string is markup to write, a pair (entry, depth) a run to draw.
    stack: list[str | tuple[Entry, int]] = []
    roots = kids.get(None, [])
    add('<ol class="ov-run">')
    if len(roots) > 1:
        stack.append("</ol>")
        _fork(stack, add, roots, 0)
    elif roots:
        stack.append("</ol>")
        stack.append((roots[0], 0))
    else:
        stack.append("</ol>")
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            add(item)
            continue
        cur, depth = item
        while True:
            branches = [k for k in kids.get(cur.id, ()) if k.id not in seen]
            line(cur, len(branches))
            if len(branches) == 1:
                cur = branches[0]
                continue
            if branches:
                _fork(stack, add, branches, depth)
            break
        if len(out) > 512:
            emit("".join(out))
            out.clear()
    # Entries no root leads to (a parent cycle), in file order.
    rest = [e for e in doc.entries if e.id not in seen and doc.get(e.id) is e]
    if rest:
        add('<p class="note">Not reachable from the start:</p><ol class="ov-run">')
        for e in rest:
            line(e, 0)
        add("</ol>")
    add("</details>")
    emit("".join(out))


def _fork(
    stack: list[str | tuple[Entry, int]], add: Callable[[str], Any], branches: list[Entry], depth: int
) -> None:
    """Queue the branches of a fork (pushed in reverse: the stack pops them in order)."""
    if depth + 1 > MAX_NESTING:
        # Deep enough: the branches follow one another in this run instead of nesting.
        for kid in reversed(branches):
            stack.append((kid, depth))
            stack.append('<li class="ov-flat">branch</li>')
        return
    add('<li class="ov-fork"><ul>')
    stack.append("</ul></li>")
    for kid in reversed(branches):
        stack.append("</ol></li>")
        stack.append((kid, depth + 1))
        stack.append('<li class="ov-branch"><ol class="ov-run">')
