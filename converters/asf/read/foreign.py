"""ASF entries any harness wrote, read into the IR (the reading half of
``docs/formats/asf.md``).

One ASF entry becomes one IR entry with the ASF id. What the IR models gets typed fields;
every other member of the entry stays in the entry's ``extra`` and every other member of
an item in the message's ``extra``, so nothing is dropped. Entries piconv wrote from a pi
session carry ``pi`` records and are read back exactly by ``read_entries.py`` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson
from piconv import ir

JSONDict = dict[str, Any]
Resolve = Callable[[Any], "str | None"]  # an ASF id -> the IR id of its entry

ENVELOPE = frozenset(("type", "id", "parent", "ts"))
_ITEM_ENTRY = frozenset((*ENVELOPE, "item"))


def _kept(value: JSONDict, modelled: frozenset[str] | set[str]) -> Mapping[str, Any]:
    more = {k: v for k, v in value.items() if k not in modelled}
    return more if more else ir.EMPTY


def _str(value: Any) -> str | None:
    return value if type(value) is str else None


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


# --------------------------------------------------------------------------- content


def _data_url(url: str) -> tuple[str | None, str] | None:
    if not url.startswith("data:") or ";base64," not in url:
        return None
    media, _sep, data = url[len("data:") :].partition(";base64,")
    return media or None, data


def part(value: Any) -> ir.Part:
    """One Open Responses content part: text and inline images are modelled, anything
    else (a file, a refusal, a sidecar image, a slug-prefixed part) stays whole."""
    if type(value) is not dict:
        return ir.UnknownPart(value)
    kind = value.get("type")
    if kind in ("input_text", "output_text") and type(value.get("text")) is str:
        return ir.Text(
            value["text"],
            None,
            _kept(
                value, {"type", "text", "annotations"} if not value.get("annotations") else {"type", "text"}
            ),
        )
    if kind == "input_image" and type(value.get("image_url")) is str:
        found = _data_url(value["image_url"])
        if found is not None:
            return ir.Image(found[1], found[0], _kept(value, {"type", "image_url"}))
    return ir.UnknownPart(value)


def content(value: Any) -> ir.Content | None:
    if type(value) is str:
        return value
    if type(value) is list:
        return tuple(part(p) for p in value)
    return None


def summary_text(item: Any) -> str | None:
    """The text of a summary item: a message's text parts joined; ``None`` for an item
    holding no text (a provider's encrypted compaction)."""
    if type(item) is not dict:
        return None
    value = item.get("content")
    if type(value) is str:
        return value
    texts = (
        [p["text"] for p in value or () if type(p) is dict and type(p.get("text")) is str]
        if type(value) is list
        else []
    )
    return "\n\n".join(texts) if texts else None


def _arguments(text: Any) -> Any:
    if type(text) is not str:
        return text
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text  # not JSON: the call's arguments as the model wrote them


def item_message(item: Any, entry: JSONDict, tool_names: Mapping[str, str] | None = None) -> ir.Message:
    """The IR message an ``item`` holds. ``tool_names`` maps a call id to the function's
    name, for a tool output (which names only the call)."""
    if type(item) is not dict:
        return ir.UnknownMessage(item)
    kind = item.get("type")
    response = _str(entry.get("response"))
    if kind == "message":
        role = item.get("role")
        parts = content(item.get("content"))
        more = _kept(item, {"type", "role", "content"})
        if role == "user" and parts is not None:
            return ir.UserMessage(parts, None, more)
        if role in ("system", "developer") and parts is not None:
            return ir.SystemMessage(parts, extra=_kept(item, {"type", "content"}))
        if role == "assistant" and parts is not None:
            as_parts = (ir.Text(parts),) if type(parts) is str else parts
            return ir.AssistantMessage(as_parts, response_id=response, extra=more)  # type: ignore[arg-type]
        return ir.UnknownMessage(item)
    if kind == "reasoning":
        summary = item.get("summary")
        texts = (
            [p["text"] for p in summary or () if type(p) is dict and type(p.get("text")) is str]
            if type(summary) is list
            else []
        )
        reasoning = ir.Reasoning(
            "\n\n".join(texts) if texts else None,
            _str(item.get("encrypted_content")),
            None,
            _kept(item, {"type", "summary", "encrypted_content"}),
        )
        return ir.AssistantMessage((reasoning,), response_id=response)
    if kind == "function_call":
        call = ir.ToolCall(
            _str(item.get("call_id")),
            _str(item.get("name")),
            _arguments(item.get("arguments")),
            None,
            None,
            _kept(item, {"type", "call_id", "name", "arguments"}),
        )
        return ir.AssistantMessage((call,), response_id=response)
    if kind == "function_call_output":
        call_id = _str(item.get("call_id"))
        name = (tool_names or {}).get(call_id) if call_id is not None else None
        return ir.ToolResult(
            call_id,
            name,
            content(item.get("output")),
            None,
            None,
            None,
            None,
            _kept(item, {"type", "call_id", "output"}),
        )
    return ir.UnknownMessage(item)


# --------------------------------------------------------------------------- usage


def usage(value: Any) -> ir.Usage | None:
    """Open Responses usage: input (cached among it), output (reasoning among it), total."""
    if type(value) is not dict:
        return None
    cached = (
        (value.get("input_tokens_details") or {}).get("cached_tokens")
        if type(value.get("input_tokens_details")) is dict
        else None
    )
    reasoning = (
        (value.get("output_tokens_details") or {}).get("reasoning_tokens")
        if type(value.get("output_tokens_details")) is dict
        else None
    )
    inputs = _int(value.get("input_tokens"))
    if inputs is not None and _int(cached) is not None and 0 <= cached <= inputs:  # type: ignore[operator]
        inputs -= cached  # type: ignore[operator]  (Open Responses counts cached input in input_tokens; the IR apart)
    return ir.Usage(
        input_tokens=inputs,
        output_tokens=_int(value.get("output_tokens")),
        cache_read_tokens=_int(cached),
        reasoning_tokens=_int(reasoning),
        total_tokens=_int(value.get("total_tokens")),
        extra=_kept(
            value,
            {
                "input_tokens",
                "output_tokens",
                "total_tokens",
                "input_tokens_details",
                "output_tokens_details",
            },
        ),
    )


def _tool(value: Any) -> ir.ToolSpec:
    if type(value) is not dict:
        return ir.ToolSpec(None, None, None, {"value": value})
    # a member the IR holds only as a string (or, parameters, as a value) stays in extra
    # when it is anything else, a null among them: the declaration is kept as written
    modelled = {key for key in ("name", "description") if type(value.get(key)) is str}
    if value.get("parameters") is not None:
        modelled.add("parameters")
    return ir.ToolSpec(
        _str(value.get("name")),
        _str(value.get("description")),
        value.get("parameters"),
        _kept(value, modelled),
    )


def millis(ts: Any) -> float | None:
    """An RFC 3339 time as milliseconds since the epoch (the IR's message time)."""
    if type(ts) is not str:
        return None
    from datetime import datetime

    head, dot, fraction = ts.removesuffix("Z").partition(".")
    try:
        seconds = datetime.fromisoformat(head + "+00:00").timestamp()
    except ValueError:
        return None
    digits = "".join(c for c in fraction if c.isdigit())[:9] if dot else ""
    return seconds * 1000 + (int(digits.ljust(9, "0")) / 1e6 if digits else 0)


def _removed(name: Any) -> ir.ToolSpec:
    """A name ``tools_removed`` lists; one that is no string is kept whole, as a tool
    declaration that is no object is (``_tool``)."""
    return ir.ToolSpec(name) if type(name) is str else ir.ToolSpec(None, None, None, {"value": name})


def system_message(instructions: Any, tools: Any, removed: Any = None, ts: Any = None) -> ir.SystemMessage:
    """A system message: the instructions and tools a ``config`` sets, at ``ts``."""
    return ir.SystemMessage(
        content=instructions if type(instructions) is str else None,
        tools_added=tuple(_tool(t) for t in tools) if type(tools) is list else None,
        tools_removed=tuple(_removed(n) for n in removed) if type(removed) is list else None,
        timestamp=millis(ts),
    )


# --------------------------------------------------------------------------- entries


def with_model(message: ir.AssistantMessage, model: str) -> ir.AssistantMessage:
    """An assistant item's message with the model its ``response`` entry names."""
    return ir.replace(message, model=ir.ModelRef(None, model))


def _reference(entry: JSONDict, member: str, resolve: Resolve) -> tuple[str | None, tuple[str, ...]]:
    """The IR id of the entry ``member`` names, and ``(member,)`` when that id is all the
    file said (the same id, or nothing named); else the member stays in ``extra`` as
    written: a reference to no entry, or to one of the entries piconv wrote of a pi
    entry, which the IR names as a whole."""
    named = entry.get(member)
    found = resolve(named)
    return found, ((member,) if named is None or found == named else ())


def body(
    entry: JSONDict, resolve: Resolve, tool_names: Mapping[str, str], models: Mapping[str, str]
) -> tuple[ir.Body, frozenset[str]]:
    """The IR body of one ASF entry and the members it models (the rest go to ``extra``).
    ``models`` maps a ``response_id`` to the model its ``response`` entry names."""
    kind = entry.get("type")
    if kind == "item":
        message = item_message(entry.get("item"), entry, tool_names)
        model = models.get(entry.get("response")) if type(entry.get("response")) is str else None  # type: ignore[arg-type]
        if model is not None and type(message) is ir.AssistantMessage:
            message = with_model(message, model)
        return ir.MessageBody(message), _ITEM_ENTRY
    if kind == "response":
        model = _str(entry.get("model"))
        return ir.UsageRecord(
            "response", ir.ModelRef(None, model) if model else None, usage(entry.get("usage")), None
        ), frozenset((*ENVELOPE, "model", "usage"))
    if kind == "config":
        if "instructions" in entry or "tools_added" in entry or "tools_removed" in entry:
            message = system_message(
                entry.get("instructions"),
                entry.get("tools_added"),
                entry.get("tools_removed"),
                entry.get("ts"),
            )
            # a member of another shape than the IR holds (instructions that are no
            # string, tools in no list) stays in extra as written
            shapes = (("instructions", str), ("tools_added", list), ("tools_removed", list))
            return ir.MessageBody(message), frozenset(
                (*ENVELOPE, *(key for key, shape in shapes if type(entry.get(key)) is shape))
            )
        if type(entry.get("model")) is str:
            return ir.ModelChange(_str(entry.get("provider")), entry["model"]), frozenset(
                (*ENVELOPE, "model", "provider")
            )
        effort = entry.get("reasoning", {}).get("effort") if type(entry.get("reasoning")) is dict else None
        if type(effort) is str:
            return ir.ReasoningLevelChange(effort), ENVELOPE
    if kind == "compaction":
        first, kept_as = _reference(entry, "first_kept", resolve)
        config = entry.get("config")
        checkpoint = None
        if type(config) is dict and ("instructions" in config or "tools" in config):
            # the instructions and tools in force at the fold, as the context shows them
            checkpoint = system_message(
                config.get("instructions"), config.get("tools"), None, entry.get("ts")
            )
        return ir.Compaction(
            summary_text(entry.get("summary")),
            first,
            _int(entry.get("tokens_before")),
            checkpoint,
            usage(entry.get("usage")),
        ), frozenset((*ENVELOPE, *kept_as, "tokens_before", "usage"))
    if kind == "branch_summary":
        from_id, kept_as = _reference(entry, "from", resolve)
        return ir.BranchSummary(
            summary_text(entry.get("summary")), from_id, usage(entry.get("usage"))
        ), frozenset((*ENVELOPE, *kept_as, "usage"))
    if kind == "label":
        label = entry.get("label")
        target, kept_as = _reference(entry, "target", resolve)
        # a label that is neither a string nor null is no label the IR models: kept whole
        if label is None or type(label) is str:
            kept_as = (*kept_as, "label")
        return ir.Label(target, _str(label)), frozenset((*ENVELOPE, *kept_as))
    if kind == "info" and type(entry.get("name")) is str:
        return ir.SessionName(entry["name"]), frozenset((*ENVELOPE, "name"))
    if kind == "custom":
        return ir.ExtensionState(_str(entry.get("ns")), entry.get("data")), frozenset(
            (*ENVELOPE, "ns", "data")
        )
    return ir.UnknownBody(kind if type(kind) is str else None), ENVELOPE


def entry(
    value: JSONDict,
    line: int,
    entry_id: str,
    parent: str | None,
    resolve: Resolve,
    tool_names: Mapping[str, str],
    models: Mapping[str, str],
) -> ir.Entry:
    made, modelled = body(value, resolve, tool_names, models)
    role = value["item"].get("role") if type(value.get("item")) is dict else None
    origin = ir.Origin(line, _str(value.get("type")), _str(role))
    return ir.Entry(entry_id, parent, _str(value.get("ts")), made, origin, _kept(value, modelled))
