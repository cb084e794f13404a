"""A session as rows: one for the ``sessions`` table, one per entry for ``entries``.

The same rows make a one-session database (``--to sqlite -o s.db``) and, in a directory
run, travel from the worker to the process that writes the archive (:func:`payload`).
The searchable ``text`` of an entry is what a person reads in it: message text, reasoning,
tool calls as ``name {arguments}``, tool and shell output, summaries. System prompts are
left out (they repeat in every session and would match every search); images are not text.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from piconv import session_facts
from piconv.ir import (
    AssistantMessage,
    BranchSummary,
    Compaction,
    ContextEdit,
    Document,
    Entry,
    ExtensionMessage,
    Label,
    MessageBody,
    ModelChange,
    Reasoning,
    SessionName,
    ShellCommand,
    SummaryMessage,
    Text,
    ToolCall,
    ToolResult,
    UnknownMessage,
    UsageRecord,
    UserMessage,
    total_tokens,
)

from .schema import ENTRY_COLUMNS, SESSION_COLUMNS

_ID_UNSAFE = re.compile(r"[^A-Za-z0-9-]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_INT64 = 1 << 63


def _clean(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """The row as SQLite can store it: a lone surrogate (kept by the reader from an
    escape in the file) becomes U+FFFD, an integer beyond 64 bits null."""
    out = list(row)
    for i, value in enumerate(out):
        kind = type(value)
        if kind is str:
            if not value.isascii():
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    out[i] = _SURROGATE.sub("\ufffd", value)
        elif kind is int and not -_INT64 <= value < _INT64:
            out[i] = None
    return tuple(out)


def _json(value: Any) -> str:
    try:
        return orjson.dumps(value, default=str).decode()
    except TypeError:  # a lone surrogate, an integer beyond 64 bits: the stdlib writes them
        import json

        return json.dumps(value, ensure_ascii=False, default=str)


def anchor(entry_id: str) -> str:
    """The entry's ``id`` in the html format's page (``e-`` plus the id, every character
    outside ``[A-Za-z0-9-]`` as ``_<hex>_``); the tests hold it equal to the html converter's."""
    return "e-" + _ID_UNSAFE.sub(lambda m: f"_{ord(m.group()):x}_", entry_id)


def _content(content: Any) -> str | None:
    if isinstance(content, str):
        return content or None
    if not content:
        return None
    pieces = []
    for part in content:
        kind = type(part)
        if kind is Text or kind is Reasoning:
            if part.text:
                pieces.append(part.text)
        elif kind is ToolCall:
            args = _json(part.arguments) if part.arguments is not None else ""
            pieces.append(f"{part.name or '?'} {args}".rstrip())
    return "\n\n".join(pieces) or None


def _model(model: Any) -> str | None:
    if model is None or not model.model:
        return None
    return "/".join(x for x in (model.provider, model.model) if x)


def _finite(value: Any) -> float | None:
    if type(value) in (int, float) and value == value and abs(value) != float("inf"):
        return float(value)
    return None


def _cost(usage: Any) -> float | None:
    """A call's cost: its total, else (a session written before pi recorded the total)
    the sum of its parts, as pi's export adds them; None without a cost."""
    cost = usage.cost if usage is not None else None
    if cost is None:
        return None
    total = _finite(cost.total)
    if total is not None:
        return total
    parts = [_finite(p) for p in (cost.input, cost.output, cost.cache_read, cost.cache_write)]
    return sum(p for p in parts if p is not None) if any(p is not None for p in parts) else None


def entry_row(entry: Entry) -> tuple[Any, ...]:
    """The ``entries`` row of one entry, in :data:`ENTRY_COLUMNS` order."""
    body = entry.body
    role = text = tool = model = usage = None
    if type(body) is MessageBody:
        message = body.message
        role = message.role
        kind = type(message)
        if kind is UserMessage or kind is ExtensionMessage:
            text = _content(message.content)  # type: ignore[union-attr]
        elif kind is AssistantMessage:
            text = _content(message.content)  # type: ignore[union-attr]
            names = [p.name for p in message.content or () if type(p) is ToolCall and p.name]  # type: ignore[union-attr]
            tool = ", ".join(dict.fromkeys(names)) or None
            model = _model(message.model)  # type: ignore[union-attr]
            usage = message.usage  # type: ignore[union-attr]
        elif kind is ToolResult:
            text = _content(message.content)  # type: ignore[union-attr]
            tool = message.tool_name  # type: ignore[union-attr]
            usage = message.usage  # type: ignore[union-attr]
        elif kind is ShellCommand:
            text = "\n".join(x for x in (message.command, message.output) if x) or None  # type: ignore[union-attr]
        elif kind is SummaryMessage:
            text = message.summary or None  # type: ignore[union-attr]
        elif kind is UnknownMessage:
            role = message.role if isinstance(message.role, str) else None
    elif type(body) in (Compaction, BranchSummary):
        text = body.summary or None  # type: ignore[union-attr]
        usage = body.usage  # type: ignore[union-attr]
    elif type(body) is ModelChange:
        model = _model(body)
    elif type(body) is UsageRecord:
        model = _model(body.model)
        usage = body.usage
    elif type(body) is SessionName:
        text = body.name or None
    elif type(body) is Label:
        text = body.label or None
    elif type(body) is ContextEdit:
        text = _content(body.replacement)
    return _clean(
        (
            entry.id,
            entry.parent_id,
            entry.kind,
            role,
            entry.timestamp if isinstance(entry.timestamp, str) else None,
            text,
            tool,
            model,
            total_tokens(usage) if usage is not None else None,
            _cost(usage),
            anchor(entry.id),
            entry.origin.line,
            *(_split(usage) if usage is not None else (None, None, None, None)),
        )
    )


def _count(value: Any) -> int:
    return value if type(value) is int and value >= 0 else 0


def _split(usage: Any) -> tuple[int, int, int, int]:
    """A call's input, output, cache read and cache write tokens, as every total of piconv
    counts them (a count of zero or more; anything else 0)."""
    return (
        _count(usage.input_tokens),
        _count(usage.output_tokens),
        _count(usage.cache_read_tokens),
        _count(usage.cache_write_tokens),
    )


def session_row(
    doc: Document, key: str, sha256: str | None = None, html: str | None = None
) -> tuple[Any, ...]:
    """The ``sessions`` row, in :data:`SESSION_COLUMNS` order."""
    facts = session_facts(doc)
    created = facts["created"]
    month = created[:7] if isinstance(created, str) and re.match(r"\d{4}-\d{2}", created) else None
    values = {
        **{name: facts.get(name) for name in SESSION_COLUMNS},
        "key": key,
        "month": month,
        "models": _json(facts["models"]),
        "source": doc.session.source_path,
        "reader": doc.session.source_format or None,
        "sha256": sha256,
        "html": html,
    }
    return _clean(tuple(values[name] for name in SESSION_COLUMNS))


def payload(doc: Document) -> bytes:
    """The rows of ``doc`` as bytes, for the process that writes a directory run's archive."""
    rows = [entry_row(e) for e in doc.entries]
    return orjson.dumps({"session": session_row(doc, ""), "entries": rows})


def from_payload(data: bytes) -> tuple[list[Any], list[list[Any]]]:
    value = orjson.loads(data)
    session, entries = value["session"], value["entries"]
    if len(session) != len(SESSION_COLUMNS) or any(len(row) != len(ENTRY_COLUMNS) for row in entries):
        raise ValueError("the rows do not match this piconv's archive schema")
    return session, entries
