"""A piconv plugin: a one-line-per-turn plain-text transcript (the ``turns`` output
format) and an OpenAI chat-completions request reader (the ``chat-request`` input
format, ``chat_request.py``).

It uses only piconv's public plugin API: ``piconv.hookimpl``, ``piconv.Converter``,
``piconv.Option``, ``piconv.Reader``, ``piconv.InputError`` and the IR in ``piconv.ir``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import IO, Any

from piconv import Converter, Option, Reader, Report, hookimpl, ir

from . import chat_request

PICONV_PLUGIN_API = 2
"""register_readers and Reader are plugin interface version 2."""

_SPACE = re.compile(r"\s+")
# Terminal control characters from a session must not reach a terminal that shows the file.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _fold(text: str, width: int) -> str:
    text = _CONTROL.sub("", _SPACE.sub(" ", text)).strip()
    if width and len(text) > width:
        text = text[: width - 1] + "…"
    return text


def _text_of(content: ir.Content | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    pieces = []
    for part in content:
        if isinstance(part, ir.Text) and part.text:
            pieces.append(part.text)
        elif isinstance(part, ir.ToolCall):
            pieces.append(f"[{part.name or '?'}{_call_hint(part.arguments)}]")
        elif isinstance(part, ir.Image):
            pieces.append("[image]")
    return " ".join(pieces)


def _call_hint(arguments: Any) -> str:
    if isinstance(arguments, dict):
        for key in ("path", "command", "pattern", "file_path", "query"):
            value = arguments.get(key)
            if isinstance(value, str):
                return f" {value}"
    return ""


def _line(entry: ir.Entry) -> tuple[str, str] | None:
    body = entry.body
    if isinstance(body, ir.MessageBody):
        m = body.message
        if isinstance(m, ir.UserMessage):
            return "user", _text_of(m.content)
        if isinstance(m, ir.AssistantMessage):
            text = _text_of(m.content)
            if m.stop_reason in ("error", "aborted"):
                text = f"{text} ({m.stop_reason}{': ' + m.error_message if m.error_message else ''})".strip()
            return "assistant", text
        if isinstance(m, ir.ToolResult):
            status = "error" if m.is_error else "ok"
            first = _text_of(m.content).strip().split("\n", 1)[0]
            return "tool", f"{m.tool_name or '?'} {status}: {first}"
        if isinstance(m, ir.ShellCommand):
            code = f" (exit {m.exit_code})" if m.exit_code not in (None, 0) else ""
            return "shell", f"$ {m.command or ''}{code}"
        if isinstance(m, ir.ExtensionMessage):
            hidden = "" if m.display is not False else " (hidden)"
            return "extension", f"[{m.extension_type or '?'}]{hidden} {_text_of(m.content)}"
        return None
    if isinstance(body, (ir.Compaction, ir.BranchSummary)):
        return "summary", body.summary or ""
    if isinstance(body, ir.Label) and body.label:
        return "label", f"{body.target_id}: {body.label}"
    if isinstance(body, ir.ModelChange):
        return "model", f"{body.provider}/{body.model}"
    return None


def _left_out(entry: ir.Entry, report: Report) -> None:
    """Records what a line leaves out of ``entry``: parts with no text in it (thinking,
    images), a tool result's details, or the whole entry when it makes no line."""
    line = entry.origin.line
    message = entry.message
    content = getattr(message, "content", None)
    if isinstance(content, tuple):
        for part in content:
            if isinstance(part, ir.Reasoning):
                report.add("thinking", line)
            elif isinstance(part, ir.Image):
                report.add("images", line)
            elif isinstance(part, ir.UnknownPart):
                report.add("unknown-part", line, str(part.type))
    if isinstance(message, ir.ToolResult) and message.details is not None:
        report.add("tool-details", line)


def write_turns(doc: ir.Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    width = options.get("width")
    width = 200 if width is None else int(width)
    written = 0
    path = doc.path(options.get("leaf"))
    if len(path) < len(doc.entries):
        report.add("other-branches", count=len(doc.entries) - len(path))
    for entry in path:
        line = _line(entry)
        if line is None:
            # not a turn (a system prompt, a setting, extension state): left out, by kind
            kind = entry.message.role if entry.message is not None else entry.kind
            report.add("entry-not-shown", entry.origin.line, str(kind))
            continue
        _left_out(entry, report)
        who, text = line
        stamp = entry.timestamp or "-"
        folded = _fold(text, 0)
        if width and len(folded) > width:
            report.add("text-cut", entry.origin.line)
            folded = _fold(folded, width)
        out.write(f"{stamp}  {who:<10} {folded}".rstrip().encode() + b"\n")
        written += 1
    report.entries_written = written


def check_turns(data: bytes) -> list[str]:
    """Every line is `timestamp  who  text`, valid UTF-8, with no control characters."""
    errors = []
    try:
        text = data.decode()
    except UnicodeDecodeError as exc:
        return [f"line 1: not UTF-8: {exc}"]
    for n, line in enumerate(text.split("\n")[:-1], 1):
        if not re.fullmatch(r"\S+  [a-z]+ *( .*)?", line) or _CONTROL.search(line):
            errors.append(f"line {n}: not a turn line: {line[:60]!r}")
    if text and not text.endswith("\n"):
        errors.append("last line: no newline at the end")
    return errors


@hookimpl
def register_converters(register: Any) -> None:
    register(
        Converter(
            name="turns",
            summary="plain text, one line per turn (timestamp, who, folded text)",
            extension=".txt",
            media_type="text/plain",
            write=write_turns,
            check=check_turns,
            mapping_doc="plugins/piconv-example/README.md",
            options=(Option("--width", "cut each line's text at N characters (0: no cut)", metavar="N"),),
        )
    )


@hookimpl
def register_readers(register: Any) -> None:
    register(
        Reader(
            name=chat_request.NAME,
            summary='OpenAI chat-completions request body ({"model", "messages"}), one JSON document',
            detect=chat_request.detect,
            read=chat_request.read,
            extensions=(".json",),
            context=chat_request.context,
            mapping_doc="plugins/piconv-example/README.md",
        )
    )
