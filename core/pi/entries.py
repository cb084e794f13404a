"""pi session entries ↔ IR entries (one entry = one line of a pi file)."""

from __future__ import annotations

from typing import Any

from ..ir import (
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
from ..records import compile_maker
from . import model as pm
from .model import Table, _join

JSONDict = dict[str, Any]

ENVELOPE = ("type", "id", "parentId", "timestamp")


def _load_checkpoint(raw: JSONDict) -> SystemMessage | None:
    message = pm.load_message(raw)
    return message if type(message) is SystemMessage else None


def _dump_checkpoint(message: SystemMessage) -> Any:
    return pm.dump_message(message)


COMPACTION: Table = {
    "summary": ("summary", "str", None, None),
    "firstKeptEntryId": ("first_kept_id", "str", None, None),
    "tokensBefore": ("tokens_before", "num", None, None),
    "systemMessage": ("checkpoint", "system", _load_checkpoint, _dump_checkpoint),
    "usage": ("usage", "dict", pm.load_usage, pm.dump_usage),
    "details": ("details", "any", None, None),
    "fromHook": ("by_extension", "bool", None, None),
}
BRANCH_SUMMARY: Table = {
    "fromId": ("from_id", "str", None, None),
    "summary": ("summary", "str", None, None),
    "usage": ("usage", "dict", pm.load_usage, pm.dump_usage),
    "details": ("details", "any", None, None),
    "fromHook": ("by_extension", "bool", None, None),
}
MODEL_CHANGE: Table = {
    "provider": ("provider", "str", None, None),
    "modelId": ("model", "str", None, None),
}
THINKING_CHANGE: Table = {"thinkingLevel": ("level", "str", None, None)}
LABEL: Table = {
    "targetId": ("target_id", "str", None, None),
    "label": ("label", "str", None, None),
}
SESSION_INFO: Table = {"name": ("name", "str", None, None)}
CUSTOM: Table = {
    "customType": ("extension_type", "str", None, None),
    "data": ("data", "any", None, None),
}
USAGE_ENTRY: Table = {
    "kind": ("usage_kind", "str", None, None),
    "usage": ("usage", "dict", pm.load_usage, pm.dump_usage),
    "note": ("note", "str", None, None),
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

_BODY_LOADERS: dict[str, Any] = {
    kind: pm.compile_table(cls, table, skip=ENVELOPE) for kind, (cls, table) in BODY_TABLES.items()
}
_BODY_LOADERS["usage"] = pm.compile_table(
    UsageRecord, USAGE_ENTRY, skip=ENVELOPE, groups={"model": (ModelRef, _USAGE_MODEL)}
)
_load_custom_message = pm.compile_table(ExtensionMessage, pm.EXTENSION, skip=ENVELOPE[:3])
_set_extension_extra = ExtensionMessage.extra.__set__  # type: ignore[attr-defined]
_MESSAGE_ENTRY_KEYS = frozenset((*ENVELOPE, "message"))
_CONTEXT_EDIT_KEYS = frozenset((*ENVELOPE, "targetId", "replacement"))
_make_entry = compile_maker(Entry)
_make_message_body = compile_maker(MessageBody)
_make_origin = compile_maker(Origin)
_NO_SYNTHESIZED: frozenset[str] = frozenset()


def load_body(kind: Any, raw: JSONDict) -> tuple[Body, JSONDict | None]:
    """The IR body of a pi entry, and its members the body leaves over (envelope excluded;
    a ``timestamp`` the body did not take stays with the envelope)."""
    if kind == "message":
        message = raw.get("message")
        rest = None
        if not raw.keys() <= _MESSAGE_ENTRY_KEYS:
            rest = {k: v for k, v in raw.items() if k not in _MESSAGE_ENTRY_KEYS}
        if type(message) is dict:
            return _make_message_body(pm.load_message(message)), rest
        if "message" in raw:
            rest = rest or {}
            rest["message"] = message
        return MessageBody(UnknownMessage(None)), rest
    loader = _BODY_LOADERS.get(kind) if type(kind) is str else None
    if loader is not None:
        return loader(raw)
    if kind == "custom_message":
        message = _load_custom_message(raw)
        rest = dict(message.extra) if message.extra else None
        if rest is not None:
            _set_extension_extra(message, EMPTY)
            if type(rest.get("timestamp")) is str:
                del rest["timestamp"]  # the entry's own timestamp, read with the envelope
        return MessageBody(message), rest
    if kind == "context_edit":
        rest = {k: v for k, v in raw.items() if k not in _CONTEXT_EDIT_KEYS}
        target = raw.get("targetId")
        if type(target) is not str:
            if "targetId" in raw:
                rest["targetId"] = target
            target = None
        replacement = raw.get("replacement", ...)
        if replacement is None:
            return ContextEdit(target, omit=True), rest
        if (
            type(replacement) is dict
            and len(replacement) == 1
            and type(replacement.get("content")) in (str, list)
        ):
            return ContextEdit(target, replacement=pm.load_content(replacement["content"])), rest
        if replacement is not ...:
            rest["replacement"] = replacement
        return ContextEdit(target), rest
    rest = {k: v for k, v in raw.items() if k not in ENVELOPE}
    return UnknownBody(kind if type(kind) is str else None), rest


def load_entry(
    raw: JSONDict,
    line: int,
    entry_id: str,
    parent_id: str | None,
    synthesized: frozenset[str] = _NO_SYNTHESIZED,
    overrides: JSONDict | None = None,
) -> Entry:
    """An IR entry. ``entry_id``/``parent_id`` are the tree's (after migration and repair);
    ``overrides`` are source members the tree replaced, kept for the lossless writer."""
    kind = raw.get("type")
    body, extra = load_body(kind, raw)
    source_role = None
    if type(body) is MessageBody and type(body.message) is ExtensionMessage:
        message = raw.get("message")
        if type(message) is dict and message.get("role") == "hookMessage":
            source_role = "hookMessage"
    timestamp = raw.get("timestamp")
    if type(timestamp) is not str:
        timestamp = None
        if "timestamp" in raw and not (kind == "custom_message" and body.message.timestamp is not None):  # type: ignore[union-attr]
            extra = extra or {}
            extra["timestamp"] = raw["timestamp"]
    if type(kind) is not str:
        kind = None
        if "type" in raw:
            extra = extra or {}
            extra["type"] = raw["type"]
    if overrides:
        extra = extra or {}
        extra.update(overrides)
    return _make_entry(
        entry_id,
        parent_id,
        timestamp,
        body,
        _make_origin(line, kind, source_role, synthesized),
        extra or EMPTY,
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
