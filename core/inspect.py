"""``piconv inspect``: what a user needs to know about a session file, as data."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .facts.spending import usage_totals
from .ir import (
    AssistantMessage,
    Compaction,
    Document,
    MessageBody,
    ModelChange,
    ReasoningLevelChange,
    UnknownMessage,
)


def totals(doc: Document) -> dict[str, Any]:
    """Token and cost totals over every entry of the file (all branches), as every
    total piconv shows counts them (:func:`piconv.facts.spending.usage_totals`: what
    pi's session statistics count, a call's cost its recorded total else its parts):
    ``total`` is :func:`piconv.ir.total_tokens` summed, so a call without
    ``totalTokens`` counts its input, output and cache tokens."""
    counted = usage_totals(doc.entries)
    tokens = {
        "input": counted.input_tokens,
        "output": counted.output_tokens,
        "cache_read": counted.cache_read_tokens,
        "cache_write": counted.cache_write_tokens,
        "total": counted.tokens,
    }
    return {"tokens": tokens, "cost": counted.cost}


def _model_name(provider: str | None, model: str | None) -> str:
    """``provider/model``; the model alone where the input names no provider (ASF)."""
    return f"{provider}/{model}" if provider is not None or model is None else model


def summarize(doc: Document) -> dict[str, Any]:
    types: Counter[str] = Counter()
    roles: Counter[str] = Counter()
    models: Counter[str] = Counter()
    levels: list[str] = []
    compactions = []
    for entry in doc.entries:
        types[entry.origin.source_type or "(none)"] += 1
        body = entry.body
        if type(body) is MessageBody:
            message = body.message
            role = message.role if type(message) is not UnknownMessage else (message.role or "(none)")
            roles[str(role)] += 1
            if type(message) is AssistantMessage and message.model is not None:
                models[_model_name(message.model.provider, message.model.model)] += 1
        elif type(body) is ModelChange:
            models.setdefault(_model_name(body.provider, body.model), 0)
        elif type(body) is ReasoningLevelChange and body.level is not None and body.level not in levels:
            levels.append(body.level)
        elif type(body) is Compaction:
            compactions.append(
                {
                    "id": entry.id,
                    "line": entry.origin.line,
                    "first_kept_id": body.first_kept_id,
                    "tokens_before": body.tokens_before,
                }
            )
    leaves = doc.leaves()
    branch_points = doc.branch_points()
    session = doc.session
    return {
        "file": session.source_path,
        "session_id": session.id,
        "created": session.created,
        "cwd": session.cwd,
        "parent_session": session.parent_session,
        "version": session.source_version,
        "name": doc.session_name(),
        "lines": doc.lines_read,
        "entries": len(doc.entries),
        "entry_types": dict(sorted(types.items())),
        "message_roles": dict(sorted(roles.items())),
        "roots": [e.id for e in doc.roots()],
        "leaf": doc.leaf_id,
        "leaves": [e.id for e in leaves],
        "branch_points": [
            {"id": e.id, "children": [c.id for c in doc.children(e.id)]} for e in branch_points
        ],
        "compactions": compactions,
        "labels": doc.labels(),
        "models": dict(sorted(models.items())),
        "thinking_levels": levels,
        **totals(doc),
        "problems": [{"line": i.line, "code": i.code, "message": i.message} for i in doc.issues],
    }


def render_text(info: dict[str, Any]) -> str:
    """The summary for a terminal: one row per fact, whatever the session's strings
    hold (their control characters and line breaks are written as escapes)."""
    from .terminal import shown

    lines = []

    def row(label: str, value: Any) -> None:
        lines.append(f"{label + ':':<16}{shown(str(value))}")

    row("file", info["file"] or "-")
    if "reader" in info:
        row("format", info["reader"])
    row("session", info["session_id"] or "-")
    if info["name"]:
        row("name", info["name"])
    row("created", info["created"] or "-")
    row("cwd", info["cwd"] or "-")
    if info["parent_session"]:
        row("parent session", info["parent_session"])
    row("version", info["version"])
    row("lines", f"{info['lines']} ({info['entries']} entries, {len(info['problems'])} problems)")
    row("entry types", ", ".join(f"{k}×{v}" for k, v in info["entry_types"].items()) or "-")
    row("message roles", ", ".join(f"{k}×{v}" for k, v in info["message_roles"].items()) or "-")
    row("roots", ", ".join(info["roots"]) or "-")
    row("leaf", info["leaf"] or "-")
    row("leaves", f"{len(info['leaves'])}: " + ", ".join(info["leaves"]))
    row(
        "branch points",
        ", ".join(f"{b['id']} ({len(b['children'])} children)" for b in info["branch_points"]) or "none",
    )
    row("compactions", ", ".join(f"{c['id']} (line {c['line']})" for c in info["compactions"]) or "none")
    row("labels", ", ".join(f"{k}: {v}" for k, v in info["labels"].items()) or "none")
    row("models", ", ".join(f"{k} ({v} responses)" for k, v in info["models"].items()) or "-")
    if info["thinking_levels"]:
        row("thinking", " → ".join(info["thinking_levels"]))
    t = info["tokens"]
    row(
        "tokens",
        f"input {t['input']}, output {t['output']}, cache read {t['cache_read']}, cache write {t['cache_write']}, total {t['total']}",
    )
    row("cost", f"${info['cost']:.6f}")
    if info["problems"]:
        lines.append("problems:")
        for p in info["problems"]:
            lines.append(shown(f"  line {p['line']}: [{p['code']}] {p['message']}"))
    return "\n".join(lines) + "\n"
