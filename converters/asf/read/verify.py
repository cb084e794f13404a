"""Whether an IR object is well typed: every typed field holds its documented type.

The IR's promise to converters (``docs/ir.md``): a typed field holds a value of its
type or ``None``. Entries the reader rebuilds from piconv's ``pi`` records trust those
records' shapes; a file that claims piconv's records but holds other shapes (edited, or
written by an attacker) must not pass values of another type on. Checked here from the
records' own annotations, so the check follows the IR as it grows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from piconv import ir


@functools.cache
def _split(annotation: str) -> tuple[str, ...]:
    """The alternatives of an annotation (``A | B``), outside brackets (few annotations:
    each is split once)."""
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
    return tuple(out)


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


Check = Callable[[Any, str], "str | None"]
"""``check(value, where)``: why ``value`` does not fit, or ``None``."""

_NOT_MINE = "not mine"
"""What a nested check says of a value of a kind it does not check (the next one may)."""


@functools.cache
def _checker(annotation: str) -> Check:
    """The check of one annotation, made once (an IR has a few dozen)."""
    kinds: set[type] = set()
    nested: list[Check] = []
    for alt in _split(annotation):
        if alt == "JSON":
            return _anything
        if alt == "None":
            kinds.add(type(None))
        elif alt == "str":
            kinds.add(str)
        elif alt == "bool":
            kinds.add(bool)
        elif alt in ("int", "float"):
            kinds.update((int, float))
        elif alt in ("Content", "tuple[Part, ...]"):
            # a string too: the pi reader keeps an assistant message's string content as it is
            kinds.add(str)
            nested.append(_items(_checker("Part")))
        elif alt.startswith("tuple[") and alt.endswith(", ...]"):
            nested.append(_items(_checker(alt[len("tuple[") : -len(", ...]")])))
        elif alt.startswith("Mapping[str, "):
            nested.append(_members(alt[len("Mapping[str, ") : -1]))
        elif alt == "frozenset[str]":
            nested.append(_names)
        else:
            found = getattr(ir, alt, None)
            classes = _UNIONS.get(alt) or ((found,) if isinstance(found, type) else ())
            nested.append(_record(frozenset(classes)))
    fixed = frozenset(kinds)

    def check(value: Any, where: str) -> str | None:
        if type(value) in fixed:
            return None
        for inner in nested:
            why = inner(value, where)
            if why is not _NOT_MINE:
                return why
        return f"{where}: a {type(value).__name__} where the IR has {annotation}"

    return check


def _anything(_value: Any, _where: str) -> str | None:
    return None


def _items(item: Check) -> Check:
    def check(value: Any, where: str) -> str | None:
        if type(value) is not tuple:
            return _NOT_MINE
        for i, v in enumerate(value):
            why = item(v, f"{where}[{i}]")
            if why is not None:
                return why if why is not _NOT_MINE else f"{where}[{i}]: a {type(v).__name__}"
        return None

    return check


def _members(annotation: str) -> Check:
    inner = None if annotation == "JSON" else _checker(annotation)

    def check(value: Any, where: str) -> str | None:
        if not isinstance(value, Mapping):
            return _NOT_MINE
        for key, item in value.items():
            if type(key) is not str:
                return f"{where}: a member name that is no string"
            if inner is not None:
                why = inner(item, f"{where}.{key}")
                if why is not None:
                    return why if why is not _NOT_MINE else f"{where}.{key}: a {type(item).__name__}"
        return None

    return check


def _names(value: Any, _where: str) -> str | None:
    if type(value) is frozenset and all(type(v) is str for v in value):
        return None
    return _NOT_MINE


def _record(classes: frozenset[type]) -> Check:
    def check(value: Any, where: str) -> str | None:
        if type(value) not in classes:
            return _NOT_MINE
        return problem(value, where)

    return check


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, Check], ...]:
    return tuple((name, _checker(annotation)) for name, annotation in getattr(cls, "_types", {}).items())


def problem(obj: Any, where: str = "entry") -> str | None:
    """Why the IR record ``obj`` is not well typed (the first field found), or ``None``."""
    for name, check in _fields(type(obj)):
        why = check(getattr(obj, name), f"{where}.{name}")
        if why is not None:
            return why
    return None
