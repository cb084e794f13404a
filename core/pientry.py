"""pi session entries ↔ IR entries (one entry = one line of a pi file)."""

from __future__ import annotations

from typing import Any

from . import pimodel as pm
from .ir import (
    EMPTY,
    Body,
    BranchSummary,
    Compaction,
    ContextEdit,
    Entry,
    ExtensionMessage,
    ExtensionState,
    Label,
    MessageBody,
    ModelChange,
    ModelRef,
    Origin,
    ReasoningLevelChange,
    SessionName,
    SystemMessage,
    UnknownBody,
    UnknownMessage,
    UsageRecord,
)
from .pimodel import Table, _is_any, _is_bool, _is_dict, _is_num, _is_str, _join, _split

JSONDict = dict[str, Any]

ENVELOPE = ("type", "id", "parentId", "timestamp")


def _load_checkpoint(raw: JSONDict) -> SystemMessage | None:
    message = pm.load_message(raw)
    return message if type(message) is SystemMessage else None


def _is_system_message(v: Any) -> bool:
    return type(v) is dict and v.get("role") == "system"


def _dump_checkpoint(message: SystemMessage) -> Any:
    return pm.dump_message(message)


def _is_message(v: Any) -> bool:
    return type(v) is dict


COMPACTION: Table = {
    "summary": ("summary", _is_str, None, None),
    "firstKeptEntryId": ("first_kept_id", _is_str, None, None),
    "tokensBefore": ("tokens_before", _is_num, None, None),
    "systemMessage": ("checkpoint", _is_system_message, _load_checkpoint, _dump_checkpoint),
    "usage": ("usage", _is_dict, pm.load_usage, pm.dump_usage),
    "details": ("details", _is_any, None, None),
    "fromHook": ("by_extension", _is_bool, None, None),
}
BRANCH_SUMMARY: Table = {
    "fromId": ("from_id", _is_str, None, None),
    "summary": ("summary", _is_str, None, None),
    "usage": ("usage", _is_dict, pm.load_usage, pm.dump_usage),
    "details": ("details", _is_any, None, None),
    "fromHook": ("by_extension", _is_bool, None, None),
}
MODEL_CHANGE: Table = {
    "provider": ("provider", _is_str, None, None),
    "modelId": ("model", _is_str, None, None),
}
THINKING_CHANGE: Table = {"thinkingLevel": ("level", _is_str, None, None)}
LABEL: Table = {
    "targetId": ("target_id", _is_str, None, None),
    "label": ("label", _is_str, None, None),
}
SESSION_INFO: Table = {"name": ("name", _is_str, None, None)}
CUSTOM: Table = {
    "customType": ("extension_type", _is_str, None, None),
    "data": ("data", _is_any, None, None),
}
USAGE_ENTRY: Table = {
    "kind": ("usage_kind", _is_str, None, None),
    "usage": ("usage", _is_dict, pm.load_usage, pm.dump_usage),
    "note": ("note", _is_str, None, None),
}
_USAGE_MODEL = {"provider": "provider", "model": "model"}

# entry type -> (body class, field table); message-like types are handled apart.
BODY_TABLES: dict[str, tuple[type, Table]] = {
    "compaction": (Compaction, COMPACTION),
    "branch_summary": (BranchSummary, BRANCH_SUMMARY),
    "model_change": (ModelChange, MODEL_CHANGE),
    "thinking_level_change": (ReasoningLevelChange, THINKING_CHANGE),
    "label": (Label, LABEL),
    "session_info": (SessionName, SESSION_INFO),
    "custom": (ExtensionState, CUSTOM),
}
BODY_TYPE_NAMES: dict[type, str] = {cls: name for name, (cls, _t) in BODY_TABLES.items()}


def load_body(kind: Any, raw: JSONDict) -> tuple[Body, JSONDict]:
    """The IR body of a pi entry, and the members it leaves over (envelope included)."""
    if kind == "message":
        message = raw.get("message")
        rest = {k: v for k, v in raw.items() if k != "message"}
        if type(message) is dict:
            return MessageBody(pm.load_message(message)), rest
        if "message" in raw:
            rest["message"] = message
        return MessageBody(UnknownMessage(None)), rest
    if kind == "custom_message":
        fields, rest = _split(raw, pm.EXTENSION)
        fields.pop("extra", None)
        return MessageBody(ExtensionMessage(**fields)), rest
    if kind == "context_edit":
        rest = {k: v for k, v in raw.items() if k not in ("targetId", "replacement")}
        target = raw.get("targetId")
        if type(target) is not str:
            if "targetId" in raw:
                rest["targetId"] = target
            target = None
        replacement = raw.get("replacement", ...)
        if replacement is None:
            return ContextEdit(target, omit=True), rest
        if type(replacement) is dict and set(replacement) == {"content"} and pm._is_content(replacement["content"]):
            return ContextEdit(target, replacement=pm.load_content(replacement["content"])), rest
        if replacement is not ...:
            rest["replacement"] = replacement
        return ContextEdit(target), rest
    if kind == "usage":
        fields, rest = _split(raw, USAGE_ENTRY)
        fields.pop("extra", None)
        model = {}
        for key, name in _USAGE_MODEL.items():
            value = rest.get(key)
            if type(value) is str:
                model[name] = value
                del rest[key]
        if model:
            fields["model"] = ModelRef(**model)
        return UsageRecord(**fields), rest
    spec = BODY_TABLES.get(kind) if type(kind) is str else None
    if spec is None:
        return UnknownBody(kind if type(kind) is str else None), dict(raw)
    cls, table = spec
    fields, rest = _split(raw, table)
    fields.pop("extra", None)
    return cls(**fields), rest


def load_entry(
    raw: JSONDict,
    line: int,
    entry_id: str,
    parent_id: str | None,
    synthesized: frozenset[str] = frozenset(),
    overrides: JSONDict | None = None,
) -> Entry:
    """An IR entry. ``entry_id``/``parent_id`` are the tree's (after migration and repair);
    ``overrides`` are source members the tree replaced, kept for the lossless writer."""
    kind = raw.get("type")
    body, rest = load_body(kind, raw)
    source_role = None
    if type(body) is MessageBody:
        msg = raw.get("message")
        role = msg.get("role") if type(msg) is dict else None
        if role == "hookMessage":
            source_role = role
    timestamp = rest.get("timestamp")
    extra = {k: v for k, v in rest.items() if k not in ENVELOPE}
    if type(timestamp) is not str:
        timestamp = None
        if "timestamp" in rest:
            extra["timestamp"] = rest["timestamp"]
    if "type" in raw and type(kind) is not str:
        extra["type"] = kind
    if overrides:
        extra.update(overrides)
    return Entry(
        id=entry_id,
        parent_id=parent_id,
        timestamp=timestamp,
        body=body,
        origin=Origin(
            line=line,
            source_type=kind if type(kind) is str else None,
            source_role=source_role,
            synthesized=synthesized,
        ),
        extra=extra or EMPTY,
    )


def dump_body(entry: Entry, out: JSONDict) -> None:
    body = entry.body
    cls = type(body)
    if cls is MessageBody:
        message = body.message  # type: ignore[union-attr]
        if entry.origin.source_type == "custom_message" and type(message) is ExtensionMessage:
            _join(message, pm.EXTENSION, out)
        elif not (type(message) is UnknownMessage and message.value is None):
            out["message"] = pm.dump_message(message, entry.origin.source_role)
    elif cls is ContextEdit:
        if body.target_id is not None:  # type: ignore[union-attr]
            out["targetId"] = body.target_id  # type: ignore[union-attr]
        if body.omit:  # type: ignore[union-attr]
            out["replacement"] = None
        elif body.replacement is not None:  # type: ignore[union-attr]
            out["replacement"] = {"content": pm.dump_content(body.replacement)}  # type: ignore[union-attr]
    elif cls is UsageRecord:
        if body.usage_kind is not None:  # type: ignore[union-attr]
            out["kind"] = body.usage_kind  # type: ignore[union-attr]
        model = body.model  # type: ignore[union-attr]
        if model is not None:
            for key, name in _USAGE_MODEL.items():
                value = getattr(model, name)
                if value is not None:
                    out[key] = value
        if body.usage is not None:  # type: ignore[union-attr]
            out["usage"] = pm.dump_usage(body.usage)  # type: ignore[union-attr]
        if body.note is not None:  # type: ignore[union-attr]
            out["note"] = body.note  # type: ignore[union-attr]
    elif cls is not UnknownBody:
        table = BODY_TABLES[BODY_TYPE_NAMES[cls]][1]
        for key, (name, _a, _l, dump) in table.items():
            value = getattr(body, name)
            if value is not None:
                out[key] = dump(value) if dump is not None else value


def dump_entry(entry: Entry) -> JSONDict:
    """The pi JSON object an IR entry came from: typed members, then ``extra`` over them;
    members the reader synthesized are left out (``extra`` restores any they replaced)."""
    out: JSONDict = {}
    if entry.origin.source_type is not None:
        out["type"] = entry.origin.source_type
    out["id"] = entry.id
    out["parentId"] = entry.parent_id
    if entry.timestamp is not None:
        out["timestamp"] = entry.timestamp
    dump_body(entry, out)
    for key in entry.origin.synthesized:
        out.pop(key, None)
    if entry.extra:
        out.update(entry.extra)
    return out
