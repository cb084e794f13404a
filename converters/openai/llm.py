"""pi-coding-agent's ``convertToLlm``: context messages → the LLM message list.

Every item is a plain dict in pi-ai's message shape (``role``, ``content``…) whose content
parts stay IR objects; ``line`` carries the source line for the loss report. Shell
commands, extension messages and summaries become user text exactly as pi words them.
Where pi would throw on a malformed message (assistant content stored as a string, tool
result content as a string) the content is read the obvious way and reported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from piconv import Report
from piconv.converters.common.shell import js_text as _js
from piconv.converters.common.shell import shell_command_text as bash_execution_to_text
from piconv.ir import (
    AssistantMessage,
    Context,
    ExtensionMessage,
    ShellCommand,
    SummaryMessage,
    SystemMessage,
    Text,
    ToolCall,
    ToolResult,
    UserMessage,
)

from . import losses
from .jsutil import js_stringify

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"

LLMMessage = dict[str, Any]


_ABSENT = object()


def kept_text(extra: Any, key: str, line: int | None, report: Report) -> str | None:
    """The JSON text of a member kept in ``extra`` because it is no string (``""`` for
    ``null``; ``None`` when there is no such member), reported: the chat format takes
    strings only there."""
    value = extra.get(key, _ABSENT) if extra else _ABSENT
    if value is _ABSENT:
        return None
    text = "" if value is None else js_stringify(value)  # null: as if absent
    report.add(losses.VALUE_STRINGIFIED, line, f"{key}: {js_stringify(value)[:60]}")
    return text


def _text(value: str | None, extra: Any, key: str, line: int | None, report: Report) -> str:
    """A member the request must hold as a string: as it is, the JSON text of a value of
    another type, or (absent) the empty string; all but the first reported."""
    if value is not None:
        return value
    kept = kept_text(extra, key, line, report)
    if kept is None:
        report.add(losses.VALUE_STRINGIFIED, line, f"{key}: absent")
        return ""
    return kept


def _named_call(part: ToolCall, line: int | None, report: Report) -> ToolCall:
    """A tool call whose id and name are strings, as the chat format requires."""
    if part.call_id is not None and part.name is not None:
        return part
    from piconv.ir import replace

    return replace(
        part,
        call_id=_text(part.call_id, part.extra, "id", line, report),
        name=_text(part.name, part.extra, "name", line, report),
    )


def _parts(content: Any, line: int | None, report: Report, *, strings_ok: bool) -> Any:
    """Content as pi-ai expects it: a list of parts (a string only where pi accepts one)."""
    if type(content) is tuple:
        return list(content)
    if type(content) is str:
        if strings_ok:
            return content
        report.add(losses.CONTENT_REPAIRED, line, "string content read as one text part")
        return [Text(content)]
    return []  # absent: pi-ai's transformMessages turns null content into []


def convert_to_llm(
    context: Context, report: Report, line_of: Callable[[str | None], int | None]
) -> list[LLMMessage]:
    out: list[LLMMessage] = []
    append = out.append
    for cm in context.messages:
        m = cm.message
        line = line_of(cm.entry_id)
        t = type(m)
        if t is UserMessage:
            append(
                {"role": "user", "content": _parts(m.content, line, report, strings_ok=True), "line": line}
            )
        elif t is AssistantMessage:
            content = m.content
            if type(content) is not tuple:
                # pi throws on string content (content.flatMap); its evident meaning is one
                # text part. Absent content is pi-ai's [] (transformMessages).
                content = _parts(content, line, report, strings_ok=False)
            else:
                content = [_named_call(p, line, report) if type(p) is ToolCall else p for p in content]
            ref = m.model
            append(
                {
                    "role": "assistant",
                    "content": list(content),
                    "provider": ref.provider if ref else None,
                    "api": ref.api if ref else None,
                    "model": ref.model if ref else None,
                    "stopReason": m.stop_reason,
                    "line": line,
                }
            )
        elif t is ToolResult:
            append(
                {
                    "role": "toolResult",
                    "toolCallId": _text(m.call_id, m.extra, "toolCallId", line, report),
                    "toolName": m.tool_name,  # sent only for some targets: see chat.py
                    "extra": m.extra,
                    "content": _parts(m.content, line, report, strings_ok=False),
                    "isError": m.is_error,
                    "line": line,
                }
            )
        elif t is SystemMessage:
            append({"role": "system", "message": m, "line": line})
        elif t is ShellCommand:
            if m.exclude_from_context:
                continue  # pi's "!!" commands never reach the model
            append({"role": "user", "content": [Text(bash_execution_to_text(m))], "line": line})
        elif t is ExtensionMessage:
            if m.display is False:
                report.add(losses.HIDDEN_EXTENSION_SENT, line, m.extension_type)
            content = m.content
            parts = (
                [Text(content)] if type(content) is str else _parts(content, line, report, strings_ok=False)
            )
            append({"role": "user", "content": parts, "line": line})
        elif t is SummaryMessage:
            if m.kind == "branch":
                text = BRANCH_SUMMARY_PREFIX + _js(m.summary) + BRANCH_SUMMARY_SUFFIX
            else:
                text = COMPACTION_SUMMARY_PREFIX + _js(m.summary) + COMPACTION_SUMMARY_SUFFIX
            append({"role": "user", "content": [Text(text)], "line": line})
        else:  # convertToLlm drops roles it does not know
            report.add(losses.MESSAGE_DROPPED, line, str(getattr(m, "role", None)))
    return out
