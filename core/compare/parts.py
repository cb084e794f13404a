"""The figures of a run of entries and its turns: what ``piconv diff`` shows of the common
part, of each side's own part and of each side's whole path.

Turns, tokens and cost come from :func:`piconv.facts.spending.usage_totals`, the one
definition the index, the archive and ``piconv stats`` use, applied to the entries of the
part.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections import Counter
from collections.abc import Mapping, Sequence

from ..facts.spending import models_used, usage_totals
from ..facts.titles import prompt_text
from ..ir import (
    AssistantMessage,
    Entry,
    Label,
    MessageBody,
    ShellCommand,
    Text,
    ToolCall,
    ToolResult,
    UserMessage,
)
from .files import relative, shell_files, tool_files
from .model import Figures, FileTouch, ToolUse, Turn

TARGET_CHARS = 160
"""A tool call's target (a path, a command) is cut to this many characters."""
REPLY_CHARS = 400
"""A turn's reply is cut to this many characters."""
PROMPT_CHARS = 2000

_STAMP = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$")


def seconds_of(stamp: str | None) -> float | None:
    """An ISO 8601 time stamp (``2026-01-05T10:00:00.123Z``; no zone: UTC) as seconds
    since the epoch, or None when it is not one."""
    if not isinstance(stamp, str):
        return None
    m = _STAMP.match(stamp)
    if m is None:
        return None
    try:
        year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
        when = _dt.datetime(year, month, day, hour, minute, second, tzinfo=_dt.timezone.utc)
    except ValueError:
        return None
    seconds = when.timestamp() + (float(m.group(7)) if m.group(7) else 0.0)
    zone = m.group(8)
    if zone and zone != "Z":
        sign = -1 if zone[0] == "+" else 1
        digits = zone[1:].replace(":", "")
        seconds += sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    return seconds


def results_by_call(entries: Sequence[Entry]) -> dict[str, ToolResult]:
    """Each tool result of ``entries`` by the id of the call it answers (the first one)."""
    found: dict[str, ToolResult] = {}
    for entry in entries:
        message = entry.message
        if type(message) is ToolResult and isinstance(message.call_id, str):
            found.setdefault(message.call_id, message)
    return found


def _one_line(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _target(call: ToolCall) -> str:
    args = call.arguments
    if isinstance(args, Mapping):
        for key in ("command", "path", "file_path", "filePath", "pattern", "query", "url"):
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                return _one_line(value, TARGET_CHARS)
        return _one_line(", ".join(f"{k}={v!r}" for k, v in list(args.items())[:3]), TARGET_CHARS)
    return ""


def tool_uses(entries: Sequence[Entry], results: Mapping[str, ToolResult]) -> list[ToolUse]:
    uses = []
    for entry in entries:
        message = entry.message
        if type(message) is AssistantMessage:
            for part in message.content or ():
                if type(part) is ToolCall:
                    result = results.get(part.call_id) if isinstance(part.call_id, str) else None
                    error = result is not None and result.is_error is True
                    uses.append(ToolUse(part.name or "(unnamed)", _target(part), error))
    return uses


def _errors(entries: Sequence[Entry]) -> int:
    n = 0
    for entry in entries:
        message = entry.message
        if (type(message) is ToolResult and message.is_error is True) or (
            type(message) is AssistantMessage and message.stop_reason == "error"
        ):
            n += 1
    return n


def _files(entries: Sequence[Entry], cwd: str | None) -> tuple[FileTouch, ...]:
    seen: dict[str, list[bool]] = {}
    for entry in entries:
        message = entry.message
        found: list[tuple[str, bool, bool]] = []
        if type(message) is AssistantMessage:
            for part in message.content or ():
                if type(part) is ToolCall and part.name:
                    found.extend(tool_files(part.name, part.arguments))
        elif type(message) is ShellCommand and isinstance(message.command, str):
            found.extend(shell_files(message.command))
        for path, read, written in found:
            flags = seen.setdefault(relative(path, cwd), [False, False])
            flags[0] |= read
            flags[1] |= written
    return tuple(FileTouch(p, r, w) for p, (r, w) in sorted(seen.items()))


def _span(entries: Sequence[Entry]) -> tuple[str | None, str | None, float | None]:
    """The first and last time stamps of ``entries`` (labels, which may be set at any
    later time, aside) and the seconds between them."""
    stamps = [
        (seconds_of(e.timestamp), e.timestamp)
        for e in entries
        if isinstance(e.timestamp, str) and type(e.body) is not Label
    ]
    known = [(s, raw) for s, raw in stamps if s is not None]
    if not known:
        return (stamps[0][1] if stamps else None), (stamps[-1][1] if stamps else None), None
    first, last = min(known), max(known)
    return first[1], last[1], round(last[0] - first[0], 3)


def figures(entries: Sequence[Entry], results: Mapping[str, ToolResult], cwd: str | None) -> Figures:
    """The :class:`Figures` of ``entries``; ``results``: the tool results of the path
    they are on, by call id (a call's error is in its result)."""
    calls = Counter(use.name for use in tool_uses(entries, results))
    started, ended, seconds = _span(entries)
    return Figures(
        entries=len(entries),
        usage=usage_totals(entries),
        tool_calls=tuple(sorted(calls.items(), key=lambda kv: (-kv[1], kv[0]))),
        errors=_errors(entries),
        started=started,
        ended=ended,
        seconds=seconds,
        models=tuple(models_used(entries)),
        files=_files(entries, cwd),
    )


def _reply(entries: Sequence[Entry]) -> str:
    for entry in reversed(entries):
        message = entry.message
        if type(message) is AssistantMessage:
            text = " ".join(p.text for p in message.content or () if type(p) is Text and p.text)
            if text.strip():
                return _one_line(text, REPLY_CHARS)
            if message.error_message:
                return _one_line(f"(error) {message.error_message}", REPLY_CHARS)
    return ""


def turns(
    entries: Sequence[Entry], results: Mapping[str, ToolResult], first_number: int, open_turn: bool
) -> list[Turn]:
    """``entries`` cut into turns at each prompt, numbered from ``first_number``. With
    ``open_turn`` (the common part ended inside a turn), the entries before the first
    prompt make a turn of their own, without a prompt (the rest of that turn), numbered
    ``first_number - 1``; without it they belong to the first prompt's turn (what set the
    conversation up: a system prompt, a model chosen)."""
    groups: list[tuple[Entry | None, list[Entry]]] = []
    for entry in entries:
        if type(entry.body) is MessageBody and type(entry.message) is UserMessage:
            if groups and groups[-1][0] is None and not open_turn:
                groups[-1] = (entry, [*groups[-1][1], entry])
            else:
                groups.append((entry, [entry]))
        elif groups:
            groups[-1][1].append(entry)
        else:
            groups.append((None, [entry]))
    out = []
    number = first_number - 1
    for prompt, group in groups:
        if prompt is not None:
            number += 1
        if prompt is None and not any(type(e.body) is MessageBody for e in group):
            continue  # only bookkeeping (a label, a name) before the first prompt: no turn
        _s, _e, seconds = _span(group)
        text = prompt_text(prompt.message) if prompt is not None else ""  # type: ignore[arg-type]
        out.append(
            Turn(
                number=max(number, 0),
                entry_id=prompt.id if prompt is not None else None,
                prompt=_one_line(text, PROMPT_CHARS),
                tools=tuple(tool_uses(group, results)),
                errors=_errors(group),
                reply=_reply(group),
                models=tuple(models_used(group)),
                usage=usage_totals(group),
                seconds=seconds,
            )
        )
    return out
