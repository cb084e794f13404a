"""The inverse of ``items.py`` and of the writer's ``pi`` records: ASF values back to IR.

Each function takes the ASF value and the record the writer kept beside it (``left``:
the members the Open Responses shape has no field for) and gives back the IR object the
writer started from. Used by the reader (``read_entries.py``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson
from piconv import ir

JSONDict = dict[str, Any]

_PARTS: dict[str, type] = {
    "Text": ir.Text,
    "Image": ir.Image,
    "Reasoning": ir.Reasoning,
    "ToolCall": ir.ToolCall,
    "UnknownPart": ir.UnknownPart,
}


def extra(value: Any) -> Mapping[str, Any]:
    """A kept ``extra`` record as the IR's mapping (anything but an object: none)."""
    return dict(value) if type(value) is dict and value else ir.EMPTY


def part_from_json(record: JSONDict) -> ir.Part:
    """An IR part from ``items.part_json``'s record."""
    fields = {k: v for k, v in record.items() if k != "kind"}
    if "extra" in fields:
        fields["extra"] = extra(fields["extra"])
    return _PARTS[record["kind"]](**fields)  # type: ignore[no-any-return]


def content_from_json(value: Any) -> ir.Content | None:
    """The writer's ``_content_json``: a string, ``None`` or a list of part records."""
    if value is None or type(value) is str:
        return value  # type: ignore[no-any-return]
    return tuple(part_from_json(p) for p in value)


def tool_from_json(record: JSONDict) -> ir.ToolSpec:
    return ir.ToolSpec(
        record.get("name"), record.get("description"), record.get("parameters"), extra(record.get("extra"))
    )


def system_from_json(record: JSONDict) -> ir.SystemMessage:
    """A system message from the writer's ``_system_json`` record."""
    sections = record.get("sections")
    order = record.get("section_order")
    if type(sections) is dict and type(order) is list and sorted(order) == sorted(sections):
        sections = {name: sections[name] for name in order}
    added = record.get("tools_added")
    removed = record.get("tools_removed")
    return ir.SystemMessage(
        content=content_from_json(record.get("content")),
        sections=dict(sections) if sections is not None else None,
        tools_added=tuple(tool_from_json(t) for t in added) if added is not None else None,
        tools_removed=tuple(tool_from_json(t) for t in removed) if removed is not None else None,
        timestamp=record.get("timestamp"),
        extra=extra(record.get("extra")),
    )


def usage_from_json(kept: JSONDict | None) -> ir.Usage | None:
    """pi's own usage split, as ``items.usage`` kept it (the Open Responses sums are derived)."""
    if kept is None:
        return None
    fields = {k: v for k, v in kept.items() if k not in ("cost", "extra")}
    cost = kept.get("cost")
    if cost is not None:
        cost_fields = {k: v for k, v in cost.items() if k != "extra"}
        fields["cost"] = ir.Cost(**cost_fields, extra=extra(cost.get("extra")))
    return ir.Usage(**fields, extra=extra(kept.get("extra")))


def _data_url(url: str) -> tuple[str, str]:
    media, _sep, data = url[len("data:") :].partition(";base64,")
    return media, data


def with_kept(parts: list[ir.Part | None], kept: list[JSONDict] | None) -> tuple[ir.Part, ...]:
    """Parts read off the items, with the writer's per-part records put back: parts kept
    aside (``part``) go in at their index, the others get their members back."""
    by_index: dict[int, JSONDict] = {}
    for record in kept or ():
        if "part" in record:
            parts.insert(record["at"], part_from_json(record["part"]) if record["part"] is not None else None)
        else:
            by_index[record["at"]] = record
    out: list[ir.Part] = []
    for index, part in enumerate(parts):
        record = by_index.get(index)
        if record is not None and part is not None:
            part = _amend(part, record)
        out.append(part if part is not None else ir.UnknownPart(None))
    return tuple(out)


def _amend(part: ir.Part, record: JSONDict) -> ir.Part:
    cls = type(part)
    more = extra(record.get("extra"))
    if cls is ir.Text:
        text = None if record.get("text_absent") else part.text  # type: ignore[union-attr]
        return ir.Text(text, record.get("signature"), more)
    if cls is ir.Image:
        return ir.Image(None if record.get("data_absent") else part.data, record.get("media_type"), more)  # type: ignore[union-attr]
    if cls is ir.Reasoning:
        return ir.Reasoning(record.get("text"), part.signature, record.get("redacted"), more)  # type: ignore[union-attr]
    if cls is ir.ToolCall:
        arguments = None if record.get("arguments_type") == "NoneType" else part.arguments  # type: ignore[union-attr]
        name = None if record.get("name_absent") else part.name  # type: ignore[union-attr]
        return ir.ToolCall(
            record.get("call_id"), name, arguments, record.get("signature"), record.get("namespace"), more
        )
    return part


def input_content(parts: list[JSONDict], left: JSONDict) -> ir.Content | None:
    """The inverse of ``items.input_parts``: ``input_text`` / ``input_image`` parts and the
    record the writer kept in ``left``."""
    if left.get("content_absent"):
        return None
    if left.get("content_form") == "string":
        return parts[0]["text"]  # type: ignore[no-any-return]
    read: list[ir.Part | None] = []
    for part in parts:
        if part.get("type") == "input_text":
            read.append(ir.Text(part.get("text")))
        else:
            media, data = _data_url(part.get("image_url", ""))
            read.append(ir.Image(data, media))
    return with_kept(read, left.get("parts"))


def output_content(output: Any, left: JSONDict) -> ir.Content | None:
    """A ``function_call_output``'s ``output`` back to the tool result's content."""
    if type(output) is str:
        if left.get("content_form") == "string":
            return output
        return with_kept([ir.Text(output)], left.get("parts"))
    return input_content(output, left)


def arguments(text: str) -> Any:
    """A ``function_call``'s ``arguments`` string back to the JSON value pi held (orjson;
    the stdlib for what orjson refuses: a lone surrogate, an integer beyond 64 bits)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
