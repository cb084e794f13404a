"""Another writer's ASF entries as a document holds them now: what RFC 0001's context
algorithm (``context.py``) walks for a file no entry of which piconv wrote from pi.

The context is made from the document, never from the file: a filter may have changed
the document since it was read (redaction, ``--detail``), and what the context shows
must be what the document says. Nor are the file's entries kept for it, so reading
another writer's file costs the document, not the document and every parsed line.

``entry_view`` undoes ``foreign.entry`` for the members the context algorithm reads:
the envelope, a ``config``'s settings, an ``item``'s item, a ``compaction``'s
``first_kept`` and a ``branch_summary``'s ``from`` (every other member is in the entry's
``extra`` as it was read: a summary, a checkpoint, ``omit``, ``instructions_parts``, an
extension's members). Ids are the IR's, which are the file's: a repeated id is skipped
while reading, and another writer's id is renamed only when a chain piconv wrote from pi
holds it as its ``legacy_id`` (a file this module does not see, or one whose ``pi``
record is not piconv's). An item is spelled as the IR holds it (a function call's
arguments serialised again, a reasoning item's summary parts as one, a text part's type
from its role); where the context takes an entry's own item, ``rule.py`` uses the IR
message itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from piconv import ir

from .context import NOT_LABEL, Node

JSONDict = dict[str, Any]

__all__ = ["entry_view", "leaf_nodes", "path_views"]


def leaf_nodes(entries: list[ir.Entry]) -> list[Node]:
    """The entries as RFC 0001's resume rule reads them (``context.resume_leaf``)."""
    nodes: list[Node] = []
    for entry in entries:
        body = entry.body
        if isinstance(body, ir.Label):
            # a label that is no string is kept in the entry's extra, as it was read
            label = entry.extra.get("label", body.label)
            nodes.append((entry.id, entry.parent_id, label, body.target_id))
        else:
            nodes.append((entry.id, entry.parent_id, NOT_LABEL, None))
    return nodes


def path_views(document: ir.Document, leaf_id: str) -> list[JSONDict]:
    """The entries from the root down to ``leaf_id``, each as :func:`entry_view`. Of an
    entry above what the last compaction on the path keeps, the context algorithm reads
    only a ``config``'s settings: the others are seen by their envelope alone (a long
    session is mostly such entries)."""
    path = document.path(leaf_id)
    last = -1
    for index, entry in enumerate(path):
        if entry.origin.source_type == "compaction":
            last = index
    start = 0
    if last >= 0:
        kept = path[last].body.first_kept_id if isinstance(path[last].body, ir.Compaction) else None
        ids = [entry.id for entry in path[:last]]
        start = ids.index(kept) if kept in ids else last
    return [
        entry_view(entry) if index >= start or entry.origin.source_type == "config" else _envelope(entry)
        for index, entry in enumerate(path)
    ]


def _envelope(entry: ir.Entry) -> JSONDict:
    return {"type": entry.origin.source_type, "id": entry.id, "parent": entry.parent_id}


def _members(extra: Mapping[str, Any]) -> JSONDict:
    """A new dict of ``extra``'s members (most are ``ir.EMPTY``, which a dict copies
    slower than it makes an empty one: the views of a path are made at each context)."""
    return dict(extra) if extra else {}


def entry_view(entry: ir.Entry) -> JSONDict:
    """``entry`` as the ASF entry it was read from, for the context algorithm."""
    value = _members(entry.extra)
    value.pop("parent", None)  # a parent that named no earlier entry: the entry is a root
    if entry.origin.source_type is not None:
        value["type"] = entry.origin.source_type
    value["id"] = entry.id
    value["parent"] = entry.parent_id
    if entry.timestamp is not None:
        value["ts"] = entry.timestamp
    body = entry.body
    if isinstance(body, ir.MessageBody):
        message = body.message
        if value.get("type") == "config" and isinstance(message, ir.SystemMessage):
            _settings(message, value)
        else:
            value["item"] = item_of(message, entry.origin.source_role)
    elif isinstance(body, ir.ModelChange):
        value["model"] = body.model
        if body.provider is not None:
            value["provider"] = body.provider
    elif isinstance(body, ir.Compaction):
        value["first_kept"] = body.first_kept_id
        if body.tokens_before is not None:
            value["tokens_before"] = body.tokens_before
    elif isinstance(body, ir.BranchSummary):
        value["from"] = body.from_id
    return value


def _settings(message: ir.SystemMessage, value: JSONDict) -> None:
    if message.content is not None:
        value["instructions"] = message.content
    if message.tools_added is not None:
        value["tools_added"] = [_tool(tool) for tool in message.tools_added]
    if message.tools_removed is not None:
        value["tools_removed"] = [_tool_name(tool) for tool in message.tools_removed]


def _kept_whole(tool: ir.ToolSpec) -> bool:
    """Whether ``tool`` holds a declaration (or a removed name) of no shape the IR
    models, kept whole in ``extra["value"]`` (``foreign._tool``, ``foreign._removed``)."""
    return (
        tool.name is None
        and tool.description is None
        and tool.parameters is None
        and set(tool.extra) == {"value"}
    )


def _tool_name(tool: ir.ToolSpec) -> Any:
    return tool.extra["value"] if _kept_whole(tool) else tool.name


def _tool(tool: ir.ToolSpec) -> Any:
    if _kept_whole(tool):
        return tool.extra["value"]  # a declaration that was no object
    value: JSONDict = dict(tool.extra)
    for key in ("name", "description", "parameters"):
        member = getattr(tool, key)
        if member is not None:
            value[key] = member
    return value


# --------------------------------------------------------------------------- items


def item_of(message: ir.Message, role: str | None) -> Any:
    """The Open Responses item an IR message was read from (``foreign.item_message``
    undone)."""
    if isinstance(message, ir.UnknownMessage):
        return message.value
    if isinstance(message, ir.UserMessage):
        item = _members(message.extra)
        item.update(type="message", role="user", content=_content(message.content, "input_text"))
        return item
    if isinstance(message, ir.SystemMessage):
        item = _members(message.extra)
        item.update(type="message", content=_content(message.content, "input_text"))
        return item
    if isinstance(message, ir.ToolResult):
        item = _members(message.extra)
        item.update(type="function_call_output", output=_content(message.content, "input_text"))
        if message.call_id is not None:
            item["call_id"] = message.call_id
        return item
    if isinstance(message, ir.AssistantMessage):
        # a message item's parts are never reasoning or a call: one such part is the
        # item itself (whatever members it carries, a ``role`` among them)
        parts = message.content or ()
        if len(parts) == 1 and isinstance(parts[0], ir.Reasoning):
            return _reasoning(parts[0])
        if len(parts) == 1 and isinstance(parts[0], ir.ToolCall):
            return _call(parts[0])
        item = _members(message.extra)
        item.update(type="message", role="assistant", content=_content(parts, "output_text"))
        return item
    return {"type": "message", "role": role, "content": []}


def _reasoning(part: ir.Reasoning) -> JSONDict:
    item: JSONDict = {**part.extra, "type": "reasoning"}
    item["summary"] = [{"type": "summary_text", "text": part.text}] if part.text is not None else []
    if part.signature is not None:
        item["encrypted_content"] = part.signature
    return item


def _call(part: ir.ToolCall) -> JSONDict:
    item: JSONDict = {**part.extra, "type": "function_call"}
    if part.call_id is not None:
        item["call_id"] = part.call_id
    if part.name is not None:
        item["name"] = part.name
    arguments = part.arguments
    if arguments is not None:
        item["arguments"] = _arguments_text(arguments)
    return item


def _arguments_text(arguments: Any) -> str:
    """A call's arguments as its item spelled them (``foreign._arguments`` undone): a
    string is the text the model wrote when it is no JSON, else the JSON string it was
    (``"\\"123\\""`` read as ``"123"``, which is no number)."""
    if type(arguments) is str:
        try:
            orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return arguments
    return orjson.dumps(arguments).decode()


def _content(content: ir.Content | None, text_type: str) -> Any:
    if content is None or type(content) is str:
        return content
    return [_part(part, text_type) for part in content]


def _part(part: ir.Part, text_type: str) -> Any:
    if isinstance(part, ir.Text):
        made = _members(part.extra)
        made["type"] = text_type
        made["text"] = part.text
        if text_type == "output_text":
            made.setdefault("annotations", [])
        return made
    if isinstance(part, ir.Image):
        return {
            **part.extra,
            "type": "input_image",
            "image_url": f"data:{part.media_type or ''};base64,{part.data}",
        }
    if isinstance(part, ir.UnknownPart):
        return part.value
    return None
