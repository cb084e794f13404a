"""What a heading says: the entry's time, whether it starts a turn, the turn's title
(a preview of the prompt) or who speaks. The heading lines themselves are the
renderer's (:meth:`.render.Renderer.heading`)."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from piconv.ir import (
    AssistantMessage,
    BranchSummary,
    Compaction,
    Content,
    Entry,
    ExtensionMessage,
    MessageBody,
    ShellCommand,
    SummaryMessage,
    Text,
    ToolResult,
    UnknownMessage,
    UserMessage,
)

from . import escape as esc
from .blocks import parts

_ISO_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
_ISO = re.compile(r"^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d(?::\d\d)?)(?:\.\d+)?(Z|[+-]\d\d:?\d\d)?$")


def when(entry: Entry) -> str:
    """The entry's time as ``YYYY-MM-DD HH:MM:SS UTC`` (seconds precision keeps headings
    short); the message's epoch milliseconds when the entry has no usable timestamp.
    Returns Markdown: an unrecognised timestamp is escaped."""
    ts = entry.timestamp
    if isinstance(ts, str):
        if len(ts) == 24 and _ISO_MS.fullmatch(ts):
            return f"{ts[:10]} {ts[11:19]} UTC"  # what pi writes: a shortcut
        m = _ISO.match(ts.strip())
        if m:
            date, time, zone = m.groups()
            return f"{date} {time} {'UTC' if zone is None or zone == 'Z' else zone}"
    msg = entry.message
    ms = getattr(msg, "timestamp", None) if msg is not None else None
    if isinstance(ms, (int, float)) and not isinstance(ms, bool):
        try:
            return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        except (OverflowError, OSError, ValueError):
            pass
    return esc.inline(ts, 40) if isinstance(ts, str) else ""


PREVIEW_CHARS = 80
"""A turn heading's preview of its prompt is cut at this many characters."""

_WHEN_PARTS = re.compile(r"(\d{4}-\d\d-\d\d) (\d\d:\d\d)(?::\d\d)? (\S+)")


def short_time(when_text: str, last_date: str | None) -> tuple[str, str | None]:
    """A turn heading's time (minutes) from :func:`when`'s text, with the date only
    when it differs from ``last_date``; and the date now current."""
    m = _WHEN_PARTS.fullmatch(when_text)
    if m is None:
        return when_text, last_date  # (already Markdown: escaped by when())
    date, time, zone = m.groups()
    return (f"{time} {zone}" if date == last_date else f"{date} {time} {zone}"), date


def preview(content: Content | None, fallback: str) -> str:
    """The first line of a message's text, as heading text (escaped), cut at
    :data:`PREVIEW_CHARS` with "..." (ASCII: a heading of plain ASCII or Latin-1 text
    keeps the checker's buffer narrow, even beside a huge ASCII message). Only the start
    of the text is read, so a huge message costs no more than a small one."""
    for part in parts(content):
        if isinstance(part, Text) and part.text and not part.text.isspace():
            head = esc.normalize_newlines(part.text[: PREVIEW_CHARS * 4])
            line = esc.one_line(next((x for x in head.split("\n") if x.strip()), ""))
            if not line:
                continue  # (white space all through its start)
            if len(line) > PREVIEW_CHARS:
                line = line[: PREVIEW_CHARS - 3].rstrip() + "..."
            return esc.inline(line)
    return fallback


def starts_turn(entry: Entry) -> bool:
    """Whether ``entry`` starts a turn (see the module's docstring)."""
    body = entry.body
    if isinstance(body, MessageBody):
        return isinstance(body.message, TURN_MESSAGES)
    return isinstance(body, TURN_EVENTS)


def turn_title(entry: Entry) -> str:
    """What a turn heading says after its number: a preview of the prompt, the command,
    or the kind of summary (Markdown, escaped)."""
    body = entry.body
    msg = body.message if isinstance(body, MessageBody) else None
    if isinstance(msg, UserMessage):
        return preview(msg.content, "User")
    if isinstance(msg, ShellCommand):
        command = (msg.command or "")[: PREVIEW_CHARS * 4]
        return (
            "Shell command " + esc.code_span(command, PREVIEW_CHARS) if command.strip() else "Shell command"
        )
    if isinstance(msg, SummaryMessage):
        return "Branch summary" if msg.kind == "branch" else "Compaction summary"
    if isinstance(body, Compaction):
        return "Compaction"
    if isinstance(body, BranchSummary):
        return "Branch summary"
    return "Turn"


def who(entry: Entry) -> str:
    """The heading text of a message that does not start a turn (an assistant response,
    an extension message, a tool result with no call on the path; escaped Markdown)."""
    msg = entry.message
    if isinstance(msg, AssistantMessage):
        model = msg.model
        return (
            f"Assistant ({esc.inline(model.model, 80)})" if model is not None and model.model else "Assistant"
        )
    if isinstance(msg, ToolResult):
        return f"Tool result {esc.code_span(msg.tool_name or 'unknown tool', 80)}"
    if isinstance(msg, ExtensionMessage):
        hidden = " (hidden)" if msg.display is False else ""
        return f"Extension message · {esc.inline(msg.extension_type or 'unnamed', 80)}{hidden}"
    role = msg.role if isinstance(msg, UnknownMessage) else None
    return f"Message with unknown role {esc.code_span(str(role), 80)}"


def head_title(entry: Entry) -> str:
    """What an entry's turn heading (and its line in the contents) says after the number."""
    return turn_title(entry) if starts_turn(entry) else who(entry)


TURN_WHO = {UserMessage: "User", ShellCommand: "Shell command (user)"}


TURN_MESSAGES = (UserMessage, ShellCommand, SummaryMessage)
"""Messages that start a turn."""
TURN_EVENTS = (Compaction, BranchSummary)
"""Entries, not messages, that start a turn."""
