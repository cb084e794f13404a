"""The request settings in force after each pi entry (model, instructions, reasoning effort,
tools), and pi-ai's replay of system messages and model changes onto them.

A :class:`Settings` is frozen and shared between entries until one changes it, so a
session's thousands of entries hold a handful of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from piconv import ir
from piconv.converters.common.system import content_text

__all__ = ["NO_SETTINGS", "JSONDict", "Settings", "apply_system", "assistant_settings", "function_tool"]

JSONDict = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Settings:
    """Request settings in force after a pi entry."""

    model: str | None = None
    provider: str | None = None
    effort: str | None = None
    level: str | None = None
    content: tuple[str, ...] = ()
    sections: tuple[tuple[str, str], ...] = ()
    tools: tuple[tuple[str | None, JSONDict], ...] = ()

    def instructions(self) -> str:
        parts = ["\n\n".join(self.content)] + [v for _k, v in self.sections]
        return "\n\n".join(p for p in parts if p)

    def full(self) -> JSONDict:
        """The settings as an ASF ``config`` body (every member, for a ``replace``)."""
        out: JSONDict = {}
        if self.model is not None:
            out["model"] = self.model
        text = self.instructions()
        if text:
            out["instructions"] = text
        if self.effort is not None:
            out["reasoning"] = {"effort": self.effort}
        if self.tools:
            out["tools"] = [t for _n, t in self.tools]
        if self.provider is not None:
            out["provider"] = self.provider
        return out


NO_SETTINGS = Settings()


def function_tool(spec: ir.ToolSpec) -> JSONDict:
    """An IR tool as an Open Responses function tool."""
    tool: JSONDict = {"type": "function", "name": spec.name or ""}
    if spec.description is not None:
        tool["description"] = spec.description
    if type(spec.parameters) is dict:  # anything else stays in the pi member only
        tool["parameters"] = spec.parameters
    return tool


def assistant_settings(state: Settings, ref: ir.ModelRef | None) -> Settings:
    """The settings after an assistant message: pi takes the model in force from the last
    assistant message as well as from model changes, so a response from another model
    moves the settings too (``state`` itself when nothing changes)."""
    if ref is not None and (ref.model != state.model or ref.provider != state.provider):
        return Settings(
            ref.model, ref.provider, state.effort, state.level, state.content, state.sections, state.tools
        )
    return state


def apply_system(state: Settings, msg: ir.SystemMessage) -> Settings:
    """pi-ai's replay of one system message: content appended, sections patched, tools
    removed then added (a re-added name keeps its place unless removed in between)."""
    content = state.content
    text = content_text(msg.content)  # pi-ai's contentText, shared with the other converters
    if text:
        content = (*content, text)
    sections = dict(state.sections)
    for name, value in (msg.sections or {}).items():
        if value is None:
            sections.pop(name, None)
        elif type(value) is str:
            sections[name] = value
    tools = dict(state.tools)
    for spec in msg.tools_removed or ():
        tools.pop(spec.name, None)
    for spec in msg.tools_added or ():
        tools[spec.name] = function_tool(spec)
    return Settings(
        state.model,
        state.provider,
        state.effort,
        state.level,
        content,
        tuple(sections.items()),
        tuple(tools.items()),
    )
