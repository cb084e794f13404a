"""The model-visible context at a leaf, exactly as pi 1.6.0's ``buildSessionContext()``.

Steps (``session-manager.js``): the path root → leaf; model and thinking level from the
whole path; the latest compaction on the path replaces everything before its
``firstKeptEntryId`` (system messages in the kept range are dropped in favour of the
compaction's checkpoint); the latest ``context_edit`` per target within the selected
entries omits or replaces that target's content; then each entry becomes zero or more
messages. Where pi would crash on malformed data, piconv skips the offending piece and
documents it in ``docs/formats/pi.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..ir import (
    EMPTY,
    AssistantMessage,
    BranchSummary,
    Compaction,
    Context,
    ContextEdit,
    ContextMessage,
    Entry,
    ExtensionMessage,
    Message,
    MessageBody,
    ModelChange,
    ModelRef,
    ReasoningLevelChange,
    SummaryMessage,
    SystemMessage,
    ToolResult,
    UnknownMessage,
    UserMessage,
)
from ..records import replace
from . import model as pimodel
from .jsdate import js_time

if TYPE_CHECKING:
    from ..ir import Document

_MISSING = object()
_EDITABLE = (UserMessage, AssistantMessage, ToolResult, ExtensionMessage)
_ARRAY_CONTENT = (UserMessage, AssistantMessage, ToolResult)
_PATCHED = (SystemMessage, *_ARRAY_CONTENT)


def _member(entry: Entry, typed: Any, key: str) -> Any:
    """A member as pi sees it: the typed value, else the raw one kept in ``extra``."""
    if typed is not None:
        return typed
    return entry.extra.get(key, _MISSING)


def _timestamp_fields(value: Any) -> dict[str, Any]:
    """``timestamp: new Date(value).getTime()``; NaN serialises as ``null``."""
    ms = None if value is _MISSING else js_time(value)
    if ms is None:
        return {"extra": {"timestamp": None}}
    return {"timestamp": ms}


def settings(path: list[Entry]) -> tuple[ModelRef | None, str | None]:
    level: str | None = "off"
    model: ModelRef | None = None
    for entry in path:
        body = entry.body
        cls = type(body)
        if cls is ReasoningLevelChange:
            level = body.level  # type: ignore[union-attr]
        elif cls is ModelChange:
            model = ModelRef(provider=body.provider, model=body.model)  # type: ignore[union-attr]
        elif cls is MessageBody and type(body.message) is AssistantMessage:  # type: ignore[union-attr]
            ref = body.message.model  # type: ignore[union-attr]
            model = ModelRef(provider=ref.provider, model=ref.model) if ref else ModelRef()
    return model, level


def context_entries(path: list[Entry]) -> list[Entry]:
    """pi's ``buildContextEntries``: the path, cut at the latest compaction."""
    compaction_index = -1
    for i, entry in enumerate(path):
        if type(entry.body) is Compaction:
            compaction_index = i
    if compaction_index < 0:
        return path
    compaction = path[compaction_index]
    first_kept = _member(compaction, compaction.body.first_kept_id, "firstKeptEntryId")  # type: ignore[union-attr]
    selected = [compaction]
    found = False
    for entry in path[:compaction_index]:
        if entry.id == first_kept:
            found = True
        if found and not (type(entry.body) is MessageBody and type(entry.body.message) is SystemMessage):
            selected.append(entry)
    selected.extend(path[compaction_index + 1 :])
    return selected


def entry_messages(entry: Entry) -> list[Message]:
    """pi's ``sessionEntryToContextMessages`` for one entry."""
    body = entry.body
    cls = type(body)
    if cls is MessageBody:
        message = body.message  # type: ignore[union-attr]
        if entry.origin.source_type == "custom_message":
            return [_custom_message(entry, message)]  # type: ignore[arg-type]
        if type(message) is UnknownMessage and message.value is None:
            return []  # pi crashes on a message entry without a message object
        if type(message) in _PATCHED and message.content is None:  # type: ignore[union-attr]
            raw = message.extra.get("content", None) if message.extra else None  # type: ignore[union-attr]
            if raw is None:  # null or absent: pi patches it
                extra = {k: v for k, v in message.extra.items() if k != "content"}  # type: ignore[union-attr]
                empty = "" if type(message) is SystemMessage else ()
                return [replace(message, content=empty, extra=extra or EMPTY)]  # type: ignore[type-var]
        return [message]
    if cls is BranchSummary:
        summary = _member(entry, body.summary, "summary")  # type: ignore[union-attr]
        if summary is _MISSING or not summary:
            return []
        fields = _timestamp_fields(_member(entry, entry.timestamp, "timestamp"))
        from_id = _member(entry, body.from_id, "fromId")  # type: ignore[union-attr]
        if from_id is not _MISSING:
            if type(from_id) is str:
                fields["from_id"] = from_id
            else:
                fields.setdefault("extra", {})["fromId"] = from_id
        if type(summary) is str:
            fields["summary"] = summary
        else:
            fields.setdefault("extra", {})["summary"] = summary
        return [SummaryMessage(kind="branch", **fields)]
    if cls is Compaction:
        out: list[Message] = []
        checkpoint = body.checkpoint  # type: ignore[union-attr]
        if checkpoint is not None:
            out.append(checkpoint)
        else:
            raw = entry.extra.get("systemMessage")
            if raw:  # truthy but not a system message object: pi still replays it
                out.append(pimodel.load_message(raw) if type(raw) is dict else UnknownMessage(raw))
        fields = _timestamp_fields(_member(entry, entry.timestamp, "timestamp"))
        for key, name, value in (
            ("summary", "summary", body.summary),  # type: ignore[union-attr]
            ("tokensBefore", "tokens_before", body.tokens_before),  # type: ignore[union-attr]
        ):
            raw_value = _member(entry, value, key)
            if raw_value is _MISSING:
                continue
            if value is not None:
                fields[name] = value
            else:
                fields.setdefault("extra", {})[key] = raw_value
        out.append(SummaryMessage(kind="compaction", **fields))
        return out
    return []


def _custom_message(entry: Entry, message: ExtensionMessage) -> ExtensionMessage:
    """pi's ``createCustomMessage``: only the known members, content defaulting to []."""
    extra: dict[str, Any] = {}
    fields: dict[str, Any] = {}
    for name, key in (
        ("extension_type", "customType"),
        ("content", "content"),
        ("display", "display"),
        ("details", "details"),
    ):
        value = getattr(message, name)
        if value is not None:
            fields[name] = value
        elif key in entry.extra:
            raw = entry.extra[key]
            if key == "content" and raw is None:
                continue
            extra[key] = raw
    if "content" not in fields and "content" not in extra:
        fields["content"] = ()
    ts = _timestamp_fields(_member(entry, entry.timestamp, "timestamp"))
    extra.update(ts.pop("extra", {}))
    fields.update(ts)
    return ExtensionMessage(**fields, extra=extra or EMPTY)


def _apply_edit(messages: list[Message], edit: Entry) -> list[Message]:
    body: ContextEdit = edit.body  # type: ignore[assignment]
    if body.omit:
        return []
    if body.replacement is not None:
        content: Any = pimodel.dump_content(body.replacement)
    elif "replacement" in edit.extra:
        raw = edit.extra["replacement"]
        content = raw.get("content", _MISSING) if type(raw) is dict else _MISSING
    else:
        return messages  # pi crashes reading a missing replacement; piconv ignores the edit
    out: list[Message] = []
    for message in messages:
        if not isinstance(message, _EDITABLE):
            out.append(message)
            continue
        value = content
        if type(message) in (AssistantMessage, ToolResult) and type(value) is str:
            value = [{"type": "text", "text": value}]
        if value is _MISSING:
            extra = {k: v for k, v in message.extra.items() if k != "content"}
            out.append(replace(message, content=None, extra=extra or EMPTY))  # type: ignore[type-var]
        else:
            out.append(pimodel.with_content(message, value))
    return out


def build_context(document: Document, leaf_id: str | None = None) -> Context:
    """The context builder pi documents hand to :class:`piconv.ir.Document`."""
    path = document.path(leaf_id)
    model, level = settings(path)
    selected = context_entries(path)
    edits: dict[str, Entry] = {}
    for entry in selected:
        body = entry.body
        if type(body) is ContextEdit and body.target_id is not None:
            edits[body.target_id] = entry
    messages: list[ContextMessage] = []
    for index, entry in enumerate(selected):
        if index > 0 and type(entry.body) is Compaction:
            continue  # an older compaction inside the kept range contributes nothing
        produced = entry_messages(entry)
        edit = edits.get(entry.id)
        if edit is not None:
            produced = _apply_edit(produced, edit)
        messages.extend(ContextMessage(m, entry.id) for m in produced)
    return Context(
        messages=tuple(messages),
        model=model,
        reasoning_level=level,
        leaf_id=path[-1].id if path else None,
    )


def context_to_pi(context: Context) -> dict[str, Any]:
    """The context as pi's JSON ``{messages, model, thinkingLevel}``."""
    out: dict[str, Any] = {
        "messages": [pimodel.dump_message(m.message) for m in context.messages],
        "model": pimodel.dump_model_ref(context.model) if context.model is not None else None,
    }
    if context.reasoning_level is not None:
        out["thinkingLevel"] = context.reasoning_level
    return out


def context_as_pi(document: Document, leaf: str | None = None) -> dict[str, Any]:
    """The model-visible context at ``leaf`` (default: the document's leaf) as JSON in
    pi's own shape, as ``piconv inspect --context`` prints it. A document another
    reader made is shown as pi holds it after ``--to pi`` (``piconv.pi.foreign``): its
    messages in pi's names only, pi's default thinking level where it names none."""
    if document.session.source_format == "pi":
        return context_to_pi(document.context(leaf))
    return foreign_context_to_pi(document, document.context(leaf))


def foreign_context_to_pi(document: Document, context: Context) -> dict[str, Any]:
    """The context of a document another reader made, as pi's JSON (see
    :func:`context_as_pi`): each message as ``--to pi`` writes it."""
    from .foreign import pi_level, pi_message, pi_model

    messages = []
    for item in context.messages:
        entry = document.get(item.entry_id) if item.entry_id is not None else None
        message = pi_message(item.message, entry)
        if message is not None:
            messages.append(message)
    return {
        "messages": messages,
        "model": pi_model(context.model),
        "thinkingLevel": pi_level(context.reasoning_level),
    }
