"""IR content → Open Responses items, and IR usage → the Open Responses usage shape.

Each function returns the ASF value and records, in ``left``, every IR member the item
shape has no field for (kept on the entry under ``pi`` so nothing is lost).
"""

from __future__ import annotations

from typing import Any

import orjson
from piconv import ir

from .jcs import spelled

JSONDict = dict[str, Any]


def _extra(obj: Any, left: JSONDict, key: str) -> None:
    if obj.extra:
        left[key] = dict(obj.extra)


def input_parts(content: ir.Content | None, left: JSONDict) -> list[JSONDict]:
    """User-side content as ``input_text`` / ``input_image`` parts (images as data URLs)."""
    if content is None:
        left["content_absent"] = True
        return []
    if type(content) is str:
        left["content_form"] = "string"
        return [{"type": "input_text", "text": content}]
    parts: list[JSONDict] = []
    kept: list[Any] = []
    for index, part in enumerate(content):
        cls = type(part)
        if cls is ir.Text:
            parts.append({"type": "input_text", "text": part.text or ""})
            if part.signature is not None or part.extra or part.text is None:
                kept.append(
                    {
                        "at": index,
                        "signature": part.signature,
                        "extra": dict(part.extra),
                        "text_absent": part.text is None,
                    }
                )
        elif cls is ir.Image:
            media = part.media_type or "application/octet-stream"
            parts.append(
                {
                    "type": "input_image",
                    "image_url": f"data:{media};base64,{part.data or ''}",
                    "detail": "auto",
                }
            )
            if part.extra or part.media_type is None or part.data is None or "," in media:
                kept.append(
                    {
                        "at": index,
                        "extra": dict(part.extra),
                        "media_type": part.media_type,
                        "data_absent": part.data is None,
                    }
                )
        else:  # a part a user message should not hold: kept verbatim beside the item
            kept.append({"at": index, "part": part_json(part)})
    if kept:
        left["parts"] = kept
    return parts


def part_json(part: Any) -> JSONDict:
    """Any IR part as a JSON record: its fields (``None`` ones left out) and ``kind``, the
    IR class name (``UnknownPart`` with ``value``: the part verbatim)."""
    value: JSONDict = {}
    for name in part.__dataclass_fields__:
        field = getattr(part, name)
        if name == "extra":
            if field:
                value[name] = dict(field)
        elif field is not None:
            value[name] = field
    value["kind"] = type(part).__name__
    return value


def fields_json(obj: Any, skip_empty: bool = False) -> JSONDict:
    """An IR dataclass's fields as a JSON object, in field order, by direct access (no
    ``dataclasses.asdict``: the IR is immutable, nothing needs copying). ``extra``
    becomes a plain dict; ``skip_empty`` leaves out ``None`` and empty-object values."""
    out: JSONDict = {}
    for name in obj.__dataclass_fields__:
        value = getattr(obj, name)
        if name == "extra":
            value = dict(value)
        if skip_empty and (value is None or value == {}):
            continue
        out[name] = value
    return out


def arguments_text(arguments: Any) -> str:
    """Tool-call arguments as the JSON string the item carries (compact, member order kept)."""
    try:
        return orjson.dumps(arguments).decode()
    except orjson.JSONEncodeError:
        import json

        return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


def usage(u: ir.Usage | None, left: JSONDict) -> JSONDict | None:
    """pi's usage in the payload's shape. Open Responses counts cached input inside
    ``input_tokens``; pi counts cache reads and writes apart, so they are added back."""
    if u is None:
        return None
    # Spelled out member by member: this runs for every assistant message.
    inp = u.input_tokens
    out_tokens = u.output_tokens
    read = u.cache_read_tokens
    write = u.cache_write_tokens
    write_1h = u.cache_write_1h_tokens
    reasoning = u.reasoning_tokens
    total = u.total_tokens
    kept: JSONDict = {}
    if inp is not None:
        kept["input_tokens"] = inp
    if out_tokens is not None:
        kept["output_tokens"] = out_tokens
    if read is not None:
        kept["cache_read_tokens"] = read
    if write is not None:
        kept["cache_write_tokens"] = write
    if write_1h is not None:
        kept["cache_write_1h_tokens"] = write_1h
    if reasoning is not None:
        kept["reasoning_tokens"] = reasoning
    if total is not None:
        kept["total_tokens"] = total
    read = read if type(read) is int else 0
    out_tokens = out_tokens if type(out_tokens) is int else 0
    inp = (inp if type(inp) is int else 0) + read + (write if type(write) is int else 0)
    out: JSONDict = {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": read},
        "output_tokens": out_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning if type(reasoning) is int else 0},
        "total_tokens": total if type(total) is int else inp + out_tokens,
    }
    cost = u.cost
    if cost is not None:
        kept["cost"] = _cost_json(cost)
    if u.extra:
        kept["extra"] = dict(u.extra)
    left["usage"] = kept  # pi's own split (and cost) for the rebuild: OR's shape sums it
    return out


def _cost_json(cost: ir.Cost) -> JSONDict:
    """``fields_json(cost, skip_empty=True)``, spelled out (one per assistant message).
    Costs are the floats of nearly every body: spelled here as JCS (:func:`.jcs.spelled`),
    they leave the body plain for the canonical serialiser."""
    value: JSONDict = {}
    if cost.input is not None:
        value["input"] = spelled(cost.input)
    if cost.output is not None:
        value["output"] = spelled(cost.output)
    if cost.cache_read is not None:
        value["cache_read"] = spelled(cost.cache_read)
    if cost.cache_write is not None:
        value["cache_write"] = spelled(cost.cache_write)
    if cost.total is not None:
        value["total"] = spelled(cost.total)
    if cost.extra:
        value["extra"] = dict(cost.extra)
    return value
