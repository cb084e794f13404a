"""Replaying a session's system messages: the current prompt and tool set at any point.

A session's instructions are not one fixed string: every :class:`~piconv.ir.SystemMessage`
may append prompt text (``content``), patch named prompt ``sections`` (a ``None`` value
removes one) and change the tool set (``tools_added`` / ``tools_removed``, by tool name).
Replaying them in order gives the state a model saw. The rules are pi-ai 1.6.0's
(``utils/transcript.js`` and ``utils/text.js``), ported exactly so that any converter
sharing them renders the prompt the way pi sends it:

- :func:`content_text`: the text parts of a content, joined with ``"\\n"``.
- :func:`current_tools`: removals then additions of each message, in order; a re-added
  name keeps its first position unless it was removed in between (JavaScript ``Map``).
- :func:`current_system_message`: one system message holding the whole state: the
  non-empty ``content`` texts joined with ``"\\n\\n"``, the patched sections, the current
  tools, the first timestamp. ``None`` when no message had a timestamp and no tool is
  declared (pi then sends no instructions at all).
- :func:`system_text`: a system message as one prompt: its content, then each section
  value, empty parts skipped, joined with ``"\\n\\n"``.
- :func:`render_update`: a later system message for APIs that accept them mid-conversation:
  its content, then ``Updated system prompt section "NAME":\\n\\nTEXT`` or
  ``Removed system prompt section "NAME".`` per section change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from piconv.ir import Content, SystemMessage, Text, ToolSpec

__all__ = [
    "content_text",
    "current_prompt",
    "current_system_message",
    "current_tools",
    "declared_tools",
    "render_update",
    "system_text",
]


def content_text(content: Content | None, separator: str = "\n") -> str:
    """pi-ai's ``contentText``. Absent content counts as empty (pi would throw)."""
    if content is None:
        return ""
    if type(content) is str:
        return content
    return separator.join(p.text or "" for p in content if type(p) is Text)


def _sections(message: SystemMessage) -> Mapping[str, object]:
    sections = message.sections
    return sections if sections else {}


def current_tools(messages: Iterable[SystemMessage]) -> list[ToolSpec]:
    """The tool set after every message's removals and additions, in pi's order."""
    tools: dict[str | None, ToolSpec] = {}
    for message in messages:
        for tool in message.tools_removed or ():
            tools.pop(tool.name, None)
        for tool in message.tools_added or ():
            tools[tool.name] = tool
    return list(tools.values())


def declared_tools(messages: Iterable[SystemMessage]) -> list[ToolSpec]:
    """Every tool ever declared, the last definition of a name winning, in first-declaration order."""
    tools: dict[str | None, ToolSpec] = {}
    for message in messages:
        for tool in message.tools_added or ():
            tools[tool.name] = tool
    return list(tools.values())


def current_system_message(messages: Iterable[SystemMessage]) -> SystemMessage | None:
    """All system messages replayed into one (pi-ai's ``getCurrentSystemMessage``)."""
    messages = list(messages)
    content: list[str] = []
    sections: dict[str, str] = {}
    timestamp: float | None = None
    for message in messages:
        if timestamp is None:
            timestamp = message.timestamp
        text = content_text(message.content)
        if text:
            content.append(text)
        for name, value in _sections(message).items():
            if value is None:
                sections.pop(name, None)
            elif type(value) is str:
                sections[name] = value
    tools = current_tools(messages)
    if timestamp is None and not tools:
        return None
    return SystemMessage(
        content="\n\n".join(content),
        sections=sections or None,
        tools_added=tuple(tools) or None,
        timestamp=timestamp if timestamp is not None else 0,
    )


def system_text(message: SystemMessage) -> str:
    """pi-ai's ``getSystemMessageText``: content, then the section texts."""
    parts = [content_text(message.content)]
    parts.extend(v for v in _sections(message).values() if type(v) is str)
    return "\n\n".join(p for p in parts if p)


def render_update(message: SystemMessage) -> str:
    """pi-ai's ``renderSystemMessageUpdate`` for a mid-conversation system message."""
    parts: list[str] = []
    text = content_text(message.content)
    if text:
        parts.append(text)
    for name, value in _sections(message).items():
        if value is None:
            parts.append(f'Removed system prompt section "{name}".')
        elif type(value) is str:
            parts.append(f'Updated system prompt section "{name}":\n\n{value}')
    return "\n\n".join(parts)


def current_prompt(messages: Iterable[SystemMessage]) -> str:
    """The whole current system prompt as one text (pi-ai's ``getCurrentSystemPrompt``)."""
    message = current_system_message(messages)
    return system_text(message) if message is not None else ""
