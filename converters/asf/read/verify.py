"""Whether an IR object is well typed: every typed field holds its documented type.

The IR's promise to converters (``docs/ir.md``): a typed field holds a value of its
type or ``None``. Entries the reader rebuilds from piconv's ``pi`` records trust those
records' shapes; a file that claims piconv's records but holds other shapes (edited, or
written by an attacker) must not pass values of another type on. Checked here from the
records' own annotations, so the check follows the IR as it grows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from piconv import ir

_NUMBERS = (int, float)


def _split(annotation: str) -> list[str]:
    """The alternatives of an annotation (``A | B``), outside brackets."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(annotation):
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(annotation[start:i].strip())
            start = i + 1
    out.append(annotation[start:].strip())
    return out


_UNIONS: dict[str, tuple[type, ...]] = {
    "Part": (ir.Text, ir.Image, ir.Reasoning, ir.ToolCall, ir.UnknownPart),
    "Message": (
        ir.SystemMessage,
        ir.UserMessage,
        ir.AssistantMessage,
        ir.ToolResult,
        ir.ShellCommand,
        ir.ExtensionMessage,
        ir.SummaryMessage,
        ir.UnknownMessage,
    ),
    "Body": (
        ir.MessageBody,
        ir.Compaction,
        ir.BranchSummary,
        ir.ModelChange,
        ir.ReasoningLevelChange,
        ir.Label,
        ir.SessionName,
        ir.ExtensionState,
        ir.ContextEdit,
        ir.UsageRecord,
        ir.UnknownBody,
    ),
}


def _fits(value: Any, annotation: str, where: str) -> str | None:
    """Why ``value`` does not fit ``annotation``, or ``None``."""
    why = None
    for alt in _split(annotation):
        if alt == "None":
            if value is None:
                return None
            continue
        if alt == "JSON":
            return None
        if alt in ("str", "bool"):
            if type(value) is (str if alt == "str" else bool):
                return None
            continue
        if alt in ("int", "float"):
            if type(value) in _NUMBERS:
                return None
            continue
        if alt in ("Content", "tuple[Part, ...]"):
            # a string too: the pi reader keeps an assistant message's string content as it is
            if type(value) is str:
                return None
            alt = "tuple[Part, ...]"
        if alt.startswith("tuple[") and alt.endswith(", ...]"):
            if type(value) is tuple:
                inner = alt[len("tuple[") : -len(", ...]")]
                for i, item in enumerate(value):
                    why = _fits(item, inner, f"{where}[{i}]")
                    if why is not None:
                        return why
                return None
            continue
        if alt.startswith("Mapping[str, "):
            if isinstance(value, Mapping):
                inner = alt[len("Mapping[str, ") : -1]
                for key, item in value.items():
                    if type(key) is not str:
                        return f"{where}: a member name that is no string"
                    if inner != "JSON":
                        why = _fits(item, inner, f"{where}.{key}")
                        if why is not None:
                            return why
                return None
            continue
        if alt == "frozenset[str]":
            if type(value) is frozenset and all(type(v) is str for v in value):
                return None
            continue
        kinds = _UNIONS.get(alt) or ((getattr(ir, alt),) if isinstance(getattr(ir, alt, None), type) else ())
        if type(value) in kinds:
            return problem(value, where)
    return why or f"{where}: a {type(value).__name__} where the IR has {annotation}"


def problem(obj: Any, where: str = "entry") -> str | None:
    """Why the IR record ``obj`` is not well typed (the first field found), or ``None``."""
    types = getattr(type(obj), "_types", None)
    if not types:
        return None
    for name, annotation in types.items():
        why = _fits(getattr(obj, name), annotation, f"{where}.{name}")
        if why is not None:
            return why
    return None
