"""Tool calls and their results, rendered per tool where that helps the reader.

Known tools (pi's built-ins: bash, read, write, edit, ls, grep, find) get a header made
of their meaningful arguments and a body suited to the result (exit code, highlighted
file content, a diff). Any other tool, or a known one with arguments of an unexpected
shape, shows its arguments as JSON. Results are shown in ``<details>``, collapsed with a
preview when long.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from typing import Any

from piconv.ir import Image, ToolCall, ToolResult, UnknownPart

from .blocks import Ctx, collapsible, content_text, has_text, image, json_block
from .escape import text as esc
from .highlight import language_for_path
from .readable import path_html

_EXIT = re.compile(r"\n*(?:Command exited with code|exit code:?) (-?\d+)\s*$")


def _s(args: Any, *keys: str) -> str | None:
    """The first string argument among ``keys`` (arguments may be any JSON value)."""
    if not isinstance(args, dict):
        return None
    for k in keys:
        v = args.get(k)
        if isinstance(v, str):
            return v
    return None


def _head(name: str, detail: str = "", status: str = "") -> str:
    return f'<div class="tool-head"><span class="tool-name">{esc(name)}</span>{detail}{status}</div>'


def _path(p: str | None, suffix: str = "") -> str:
    if p is None:
        return ' <span class="invalid">[no path]</span>'
    return " " + path_html(p + suffix, "tool-path")


def _result_text_and_images(ctx: Ctx, result: ToolResult | None) -> tuple[str, str]:
    if result is None:
        return "", ""
    text = content_text(result.content)
    extras: list[str] = []
    if isinstance(result.content, tuple):
        for part in result.content:
            if isinstance(part, Image):
                extras.append(image(ctx, part, cls="tool-image"))
            elif isinstance(part, UnknownPart):
                extras.append(json_block(ctx, "Unknown result part", part.value))
    return text, "".join(extras)


def _output(ctx: Ctx, result: ToolResult | None, *, label: str = "Output", lang: str | None = None) -> str:
    if result is None:
        return '<p class="note pending">No result recorded.</p>'
    text, extras = _result_text_and_images(ctx, result)
    cls = "output error" if result.is_error else "output"
    block = collapsible(ctx, label, text, cls=cls, lang=lang) if has_text(text) else ""
    return block + extras or _left_out(ctx)


def _left_out(ctx: Ctx) -> str:
    """What stands where a tool's output was, when the page leaves tool output out."""
    return '<p class="note left-out">Output left out.</p>' if ctx.output_left_out else ""


def _bash(ctx: Ctx, call: ToolCall, result: ToolResult | None) -> str:
    cmd = _s(call.arguments, "command", "cmd")
    if cmd is None:
        return ""
    exit_html = ""
    out = ""
    if result is not None:
        text, extras = _result_text_and_images(ctx, result)
        # Only the tail can hold the exit line; searching all of a large output would
        # cost a regex attempt per character.
        tail_at = max(0, len(text) - 200)
        m = _EXIT.search(text, tail_at)
        # an exit code of 0 is inferred from output without an exit line: none without output
        unknown = result.is_error or (ctx.output_left_out and not text)
        code = int(m.group(1)) if m else (None if unknown else 0)
        if m:
            text = text[: m.start()]
        if code is not None:
            exit_html = f' <span class="exit {"bad" if code else "ok"}">exit {code}</span>'
        elif result.is_error:
            exit_html = ' <span class="exit bad">error</span>'
        cls = "output error" if result.is_error else "output"
        out = (collapsible(ctx, "Output", text, cls=cls) if has_text(text) else "") + extras or _left_out(ctx)
    else:
        out = '<p class="note pending">No result recorded.</p>'
    timeout = call.arguments.get("timeout") if isinstance(call.arguments, dict) else None
    t_html = (
        f' <span class="arg">timeout {esc(str(timeout))}</span>' if isinstance(timeout, (int, float)) else ""
    )
    cmd_html = ctx.highlighter.block(cmd, "bash", cls="hl cmd")
    return _head("bash", t_html, exit_html) + cmd_html + out


def _line_range(args: dict[str, Any]) -> str:
    off, lim = args.get("offset"), args.get("limit")
    if not isinstance(off, int) and not isinstance(lim, int):
        return ""
    start = off if isinstance(off, int) else 1
    return f":{start}-{start + lim - 1}" if isinstance(lim, int) and lim > 0 else f":{start}"


def _read(ctx: Ctx, call: ToolCall, result: ToolResult | None) -> str:
    path = _s(call.arguments, "path", "file_path")
    if path is None:
        return ""
    lang = language_for_path(path)
    return _head("read", _path(path, _line_range(call.arguments))) + _output(
        ctx, result, label="Content", lang=lang
    )


def _write(ctx: Ctx, call: ToolCall, result: ToolResult | None) -> str:
    path = _s(call.arguments, "path", "file_path")
    content = _s(call.arguments, "content")
    if path is None or content is None:
        return ""
    written = collapsible(ctx, "Written content", content, cls="output written", lang=language_for_path(path))
    return _head("write", _path(path)) + written + _output(ctx, result, label="Result")


def _diff_rows(diff: str) -> str:
    rows: list[str] = []
    for line in diff.split("\n"):
        c = line[:1]
        # Context lines stay bare (most of a diff): fewer elements, a smaller page.
        rows.append(
            f'<span class="add">{esc(line)}</span>'
            if c == "+"
            else f'<span class="del">{esc(line)}</span>'
            if c == "-"
            else esc(line)
        )
    return "\n".join(rows)


def _diff_html(diff: str) -> str:
    return '<pre class="diff"><code>' + _diff_rows(diff) + "</code></pre>"


def _edit_pairs(args: dict[str, Any]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    old, new = args.get("oldText", args.get("old_string")), args.get("newText", args.get("new_string"))
    if isinstance(old, str) and isinstance(new, str):
        pairs.append((old, new))
    edits = args.get("edits")
    if isinstance(edits, list):
        for e in edits:
            if isinstance(e, dict):
                o, n = e.get("oldText", e.get("old_string")), e.get("newText", e.get("new_string"))
                if isinstance(o, str) and isinstance(n, str):
                    pairs.append((o, n))
    return pairs


def _edit(ctx: Ctx, call: ToolCall, result: ToolResult | None) -> str:
    args = call.arguments
    path = _s(args, "path", "file_path")
    if path is None:
        return ""
    details = result.details if result is not None else None
    diff = details.get("diff") if isinstance(details, dict) else None
    if not isinstance(diff, str) and ctx.output_left_out:
        # The tool's output (its diff of the file) was left out: the replacement as the
        # call asked for it, old lines then new ones (as the Markdown transcript shows an
        # edit), with no diff to compute.
        pairs = _edit_pairs(args)
        diff = (
            "\n".join("-" + o.replace("\n", "\n-") + "\n+" + n.replace("\n", "\n+") for o, n in pairs) or None
        )
    elif not isinstance(diff, str):
        # No diff recorded by the tool: compute one from the requested replacement(s).
        chunks: list[str] = []
        for old, new in _edit_pairs(args):
            lines = difflib.unified_diff(old.split("\n"), new.split("\n"), lineterm="", n=3)
            chunks.extend(list(lines)[2:])  # drop the ---/+++ file header lines
        diff = "\n".join(chunks) if chunks else None
    parts = [_head("edit", _path(path))]
    if diff is not None:
        parts.append(
            collapsible(
                ctx,
                "Diff",
                diff,
                cls="output diff-block",
                body_html=_diff_html(diff),
                preview_html=_diff_rows,
            )
        )
    if result is not None and (result.is_error or diff is None or ctx.output_left_out):
        parts.append(_output(ctx, result, label="Result"))
    elif result is None:
        parts.append('<p class="note pending">No result recorded.</p>')
    return "".join(parts)


def _listing(name: str, keys: tuple[str, ...]) -> Callable[[Ctx, ToolCall, ToolResult | None], str]:
    def render(ctx: Ctx, call: ToolCall, result: ToolResult | None) -> str:
        args = call.arguments
        if not isinstance(args, dict):
            return ""
        detail = "".join(
            f' <span class="arg"><span class="k">{esc(k)}</span> {_arg(k, args[k])}</span>'
            for k in keys
            if isinstance(args.get(k), (str, int, float, bool))
        )
        return _head(name, detail) + _output(ctx, result)

    return render


def _arg(key: str, value: object) -> str:
    if key == "path" and isinstance(value, str):
        return path_html(value, "path")
    return esc(str(value))


_RENDERERS: dict[str, Callable[[Ctx, ToolCall, ToolResult | None], str]] = {
    "bash": _bash,
    "read": _read,
    "write": _write,
    "edit": _edit,
    "ls": _listing("ls", ("path", "limit")),
    "grep": _listing("grep", ("pattern", "path", "glob", "limit", "-i", "literal")),
    "find": _listing("find", ("pattern", "path", "limit")),
}


def call_language(call: ToolCall) -> str | None:
    """The language of the code block ``call``'s own part of the page names (languages.py
    collects them before the page is written): what the renderers above draw, "json"
    when they fall back to showing the arguments as they are."""
    name = call.name if isinstance(call.name, str) else "?"
    args = call.arguments
    if name == "bash":
        cmd = _s(args, "command", "cmd")
        return "json" if cmd is None else "bash" if cmd else None
    if name in ("read", "write"):
        path = _s(args, "path", "file_path")
        if path is None or (name == "write" and _s(args, "content") is None):
            return "json"
        return language_for_path(path)
    if name == "edit":
        return "json" if _s(args, "path", "file_path") is None else None
    if name in _RENDERERS:  # the listings
        return None if isinstance(args, dict) else "json"
    return "json"


def tool_call(ctx: Ctx, call: ToolCall, result: ToolResult | None, result_anchor: str | None) -> str:
    """One tool call with its result (if any). ``result_anchor`` is the HTML id of the
    result's own entry, so deep links to a tool result still land here."""
    status = "pending" if result is None else "error" if result.is_error else "ok"
    name = call.name if isinstance(call.name, str) else "?"
    renderer = _RENDERERS.get(name)
    body = renderer(ctx, call, result) if renderer is not None else ""
    if not body:  # unknown tool or unexpected arguments: show them as they are
        body = (
            _head(name)
            + json_block(ctx, "Arguments", call.arguments, cls="output args")
            + _output(ctx, result)
        )
    anchor = f'<span class="anchor" id="{result_anchor}"></span>' if result_anchor else ""
    return f'<section class="tool {status}">{anchor}{body}</section>'


def orphan_result(ctx: Ctx, result: ToolResult) -> str:
    """A tool result whose call is not in the file (or was already paired)."""
    name = result.tool_name if isinstance(result.tool_name, str) else "?"
    cid = f' <span class="arg">call {esc(result.call_id)}</span>' if isinstance(result.call_id, str) else ""
    status = "error" if result.is_error else "ok"
    return f'<section class="tool {status}">{_head(name, cid)}{_output(ctx, result)}</section>'
