"""What each detail level keeps, entry by entry: the ``detail`` filter's work.

Every rule either keeps an entry as it is, keeps it with less in it (a tool result
without its output, an assistant message without its tool calls) or drops it; what goes
is counted under a ``detail:<what>`` code with the source line. Dropped entries are then
taken out of the tree by :mod:`.tree`, which links what hung below them to what is kept
above them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..ir import (
    EMPTY,
    AssistantMessage,
    BranchSummary,
    Compaction,
    ContextEdit,
    Document,
    Entry,
    ExtensionMessage,
    ExtensionState,
    Label,
    MessageBody,
    Reasoning,
    SessionName,
    ShellCommand,
    ToolCall,
    ToolResult,
    UnknownBody,
    UnknownMessage,
    UnknownPart,
    UserMessage,
)
from ..records import compile_maker, replace
from ..report import MAX_LINES_PER_CODE
from . import LEVELS

if TYPE_CHECKING:
    from ..report import Report

Count = Callable[[str, Entry], None]
"""Counts one thing left out: its code (without ``detail:``) and the entry it was in."""
Rule = Callable[[Entry, Count], "Entry | None"]

# What each code counts, for the sentence a reader of the output gets: (one, many).
WHAT = {
    "tool-output": ("tool output", "tool outputs"),
    "shell-output": ("shell command output", "shell command outputs"),
    "tool-call": ("tool call", "tool calls"),
    "tool-result": ("tool result", "tool results"),
    "reasoning": ("reasoning block", "reasoning blocks"),
    "shell": ("shell command", "shell commands"),
    "assistant": ("assistant message", "assistant messages"),
    "extension": ("extension entry", "extension entries"),
    "system": ("system prompt", "system prompts"),
    "summary": ("summary", "summaries"),
    "summary-files": ("summary's file list", "summaries' file lists"),
    "setting": ("settings change", "settings changes"),
    "context-edit": ("context edit", "context edits"),
    "label": ("label", "labels"),
    "other": ("other entry or part", "other entries or parts"),
}


def _has_output(result: ToolResult) -> bool:
    return bool(result.content) or result.details is not None or bool(result.extra)


# Positional makers (records.compile_maker): ``calls`` rebuilds every tool result, and
# ``replace`` costs more than the page then saves on a session of mostly tool calls.
_entry = compile_maker(Entry)
_body = compile_maker(MessageBody)
_result = compile_maker(ToolResult)


def _without_output(entry: Entry, result: ToolResult) -> Entry:
    # The result stays (its call, status and usage), its content, details and any
    # member the IR does not model go: whatever the tool returned.
    kept = _result(
        result.call_id, result.tool_name, (), result.is_error, None, result.usage, result.timestamp, EMPTY
    )
    return _entry(entry.id, entry.parent_id, entry.timestamp, _body(kept), entry.origin, entry.extra)


def calls(entry: Entry, count: Count) -> Entry | None:
    """Tool calls kept, their output left out (and a user's shell command's)."""
    body = entry.body
    if type(body) is MessageBody:
        msg = body.message
        if type(msg) is ToolResult and _has_output(msg):
            count("tool-output", entry)
            return _without_output(entry, msg)
        if type(msg) is ShellCommand and msg.output:
            count("shell-output", entry)
            return replace(entry, body=MessageBody(replace(msg, output="")))
    return entry


def _user(entry: Entry, msg: UserMessage, count: Count) -> Entry:
    """A prompt without parts of a kind the IR does not know (they may be anything)."""
    content = msg.content
    if not isinstance(content, tuple) or not any(type(p) is UnknownPart for p in content):
        return entry
    for part in content:
        if type(part) is UnknownPart:
            count("other", entry)
    kept = tuple(p for p in content if type(p) is not UnknownPart)
    return replace(entry, body=MessageBody(replace(msg, content=kept)))


def conversation(entry: Entry, count: Count) -> Entry | None:
    """What the person and the agent said: prompts, replies, summaries, system prompts."""
    body = entry.body
    kind = type(body)
    if kind is MessageBody:
        msg = body.message  # type: ignore[union-attr]
        role = type(msg)
        if role is AssistantMessage:
            return _reply(entry, msg, count)  # type: ignore[arg-type]
        if role is UserMessage:
            return _user(entry, msg, count)  # type: ignore[arg-type]
        dropped = {
            ToolResult: "tool-result",
            ShellCommand: "shell",
            ExtensionMessage: "extension",
            UnknownMessage: "other",
        }.get(role)
        if dropped is not None:
            count(dropped, entry)
            return None
        return entry
    if kind in (Compaction, BranchSummary):
        if body.details is not None:  # type: ignore[union-attr]
            count("summary-files", entry)  # pi's lists of the files read and changed
            return replace(entry, body=replace(body, details=None))
        return entry
    if kind is ExtensionState:
        count("extension", entry)
        return None
    if kind is ContextEdit:
        count("context-edit", entry)
        return None
    if kind is UnknownBody:
        count("other", entry)
        return None
    return entry


def _reply(entry: Entry, msg: AssistantMessage, count: Count) -> Entry | None:
    content = msg.content or ()
    kept = []
    for part in content:
        kind = type(part)
        if kind is ToolCall:
            count("tool-call", entry)
        elif kind is Reasoning:
            count("reasoning", entry)
        elif kind is UnknownPart:
            count("other", entry)
        else:
            kept.append(part)
    if len(kept) == len(content):
        return entry
    if not kept and not msg.error_message and msg.stop_reason not in ("error", "aborted"):
        count("assistant", entry)  # nothing but tool calls and reasoning: nothing said
        return None
    return replace(entry, body=MessageBody(replace(msg, content=tuple(kept))))


_PROMPTS_DROP = {
    AssistantMessage: "assistant",
    ToolResult: "tool-result",
    ShellCommand: "shell",
    ExtensionMessage: "extension",
}


def prompts(entry: Entry, count: Count) -> Entry | None:
    """The user's prompts (and the session's name and the labels on them)."""
    body = entry.body
    kind = type(body)
    if kind is MessageBody:
        msg = body.message  # type: ignore[union-attr]
        if type(msg) is UserMessage:
            return _user(entry, msg, count)
        code = _PROMPTS_DROP.get(type(msg))
        if code is None:
            code = {"system": "system", "summary": "summary"}.get(str(msg.role), "other")
        count(code, entry)
        return None
    if kind in (SessionName, Label):
        return entry
    code = {
        Compaction: "summary",
        BranchSummary: "summary",
        ContextEdit: "context-edit",
        ExtensionState: "extension",
    }.get(kind, "setting" if entry.kind in ("model_change", "reasoning_level_change") else "other")
    count(code, entry)
    return None


RULES: dict[str, Rule] = {"calls": calls, "conversation": conversation, "prompts": prompts}


def level_of(options: Mapping[str, Any]) -> str:
    level = options.get("level", "full")
    if level is None:
        return "full"
    if not isinstance(level, str) or level.lower() not in LEVELS:
        raise UsageError(f"--detail {level!r}: the levels are {', '.join(LEVELS)} (see docs/sharing.md)")
    return level.lower()


def apply_detail(document: Document, options: Mapping[str, Any], report: Report) -> Document:
    """``document`` at the level ``options["level"]`` names (``full`` gives it back as it is)."""
    level = level_of(options)
    if level == "full":
        return document
    rule = RULES[level]
    lines: dict[str, list[int]] = {}  # code -> the source line of each thing left out

    def count(code: str, entry: Entry) -> None:
        found = lines.get(code)
        if found is None:
            found = lines[code] = []
        found.append(entry.origin.line)

    kept = [rule(entry, count) for entry in document.entries]
    if any(entry is None for entry in kept):
        from .tree import prune  # only a level that drops entries mends the tree

        entries, leaf_id = prune(document, kept, count)
    else:  # (``calls`` drops none: the tree is as it was)
        entries, leaf_id = kept, document.leaf_id  # type: ignore[assignment]
    for code, at in lines.items():  # into the report once per code
        report.add(f"detail:{code}", count=len(at))
        item = report.losses[f"detail:{code}"]
        item.lines.extend(n for n in at[: MAX_LINES_PER_CODE - len(item.lines)] if n)
    counts = {code: len(at) for code, at in lines.items()}
    return Document(
        session=document.session,
        entries=tuple(entries),
        leaf_id=leaf_id,
        issues=document.issues,
        lines_read=document.lines_read,
        context_builder=document.context_builder,
        input_path=document.input_path,
        notes={**document.notes, f"detail:{level}": sentence(level, counts)},
    )


def sentence(level: str, counts: Mapping[str, int]) -> str:
    """What a reader of the output is told: the level and what it left out."""
    parts = []
    for code, (one, many) in WHAT.items():
        n = counts.get(code, 0)
        if n:
            parts.append(f"{n:,} {one if n == 1 else many}")
    left = ", ".join(parts) if parts else "nothing"
    return f"Detail level {level}: left out {left}."
