"""The languages a page's code blocks will name, known before the page is written.

The page's script (with the grammars) is allowed by a hash in the Content-Security-
Policy at the top of the page, so the grammars must be chosen before the body, which is
streamed, is rendered. This walks the document once and mirrors the renderers' choice of
language: tool calls through tools.call_language, "bash" for shell commands, "json" for
what is shown as JSON, and the info strings of fenced code in text rendered as Markdown.
The page's Highlighter names only languages from this set, so a block this missed stays
plain rather than naming a grammar the page lacks; tests check that on the corpus.
"""

from __future__ import annotations

import re

from piconv.ir import (
    AssistantMessage,
    BranchSummary,
    Compaction,
    Content,
    Document,
    ExtensionMessage,
    ExtensionState,
    MessageBody,
    ShellCommand,
    SummaryMessage,
    Text,
    ToolCall,
    ToolResult,
    UnknownBody,
    UnknownMessage,
    UnknownPart,
    UserMessage,
)

from .highlight import language_for_name
from .tools import call_language

# An opening fence and the first word of its info string, after any container prefix
# (block quotes, list markers, indentation). Looser than CommonMark, so it finds every
# fence cmark finds (and perhaps a few more: a grammar too many costs bytes, not colour).
_FENCE = re.compile(r"^[ \t>*+\-0-9.)]*(?:`{3,}|~{3,})[ \t]*([^\s`{]+)", re.M)


def _fences(text: str | None, found: set[str]) -> None:
    if not isinstance(text, str) or ("```" not in text and "~~~" not in text):
        return
    for m in _FENCE.finditer(text):
        lang = language_for_name(m.group(1))
        if lang:
            found.add(lang)


def _content(content: Content | None, found: set[str], *, assistant: bool = False) -> None:
    """As blocks.content_html (and the assistant's renderer, which draws tool calls)."""
    if content is None:
        return
    if isinstance(content, str):
        _fences(content, found)
        return
    for part in content:
        if isinstance(part, Text):
            _fences(part.text, found)
        elif isinstance(part, ToolCall):
            lang = call_language(part) if assistant else "json"
            if lang:
                found.add(lang)
        elif isinstance(part, UnknownPart):
            found.add("json")


def page_languages(doc: Document) -> set[str]:
    found: set[str] = set()
    for entry in doc.entries:
        body = entry.body
        if isinstance(body, MessageBody):
            msg = body.message
            if isinstance(msg, (UserMessage, AssistantMessage)):
                _content(msg.content, found, assistant=isinstance(msg, AssistantMessage))
            elif isinstance(msg, ToolResult):
                if isinstance(msg.content, tuple) and any(isinstance(p, UnknownPart) for p in msg.content):
                    found.add("json")
            elif isinstance(msg, ShellCommand):
                if msg.command:
                    found.add("bash")
            elif isinstance(msg, ExtensionMessage):
                _content(msg.content, found)
                if msg.details is not None:
                    found.add("json")
            elif isinstance(msg, SummaryMessage):
                _fences(msg.summary, found)
            elif isinstance(msg, UnknownMessage):
                found.add("json")
        elif isinstance(body, (Compaction, BranchSummary)):
            _fences(body.summary, found)
        elif isinstance(body, (ExtensionState, UnknownBody)):
            found.add("json")
    return found
