"""The ``ir`` output format: the IR as versioned JSON (like pandoc's ``-t json``).

Documented in ``docs/ir.md``. Every object is written with its fields in declaration
order; absent (``None``) fields and empty ``extra`` mappings are left out; each part,
message and entry body carries its tag (``type``, ``role``, ``kind``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import IO, Any

from . import ir
from .hookspecs import hookimpl
from .jsonio import dumps
from .registry import Converter, Option
from .report import Report

PART_TAGS = {
    ir.Text: "text",
    ir.Image: "image",
    ir.Reasoning: "reasoning",
    ir.ToolCall: "tool_call",
    ir.UnknownPart: "unknown",
}


def to_json(obj: Any) -> Any:
    """Any IR object as a JSON value."""
    cls = type(obj)
    if dataclasses.is_dataclass(obj):
        out: dict[str, Any] = {}
        tag = PART_TAGS.get(cls)
        if tag is not None:
            out["type"] = tag
        elif hasattr(cls, "role") and cls is not ir.UnknownMessage:
            out["role"] = cls.role
        elif hasattr(cls, "kind") and cls is not ir.Entry:
            out["kind"] = cls.kind
        for f in dataclasses.fields(obj):
            if f.name.startswith("_") or f.name == "context_builder":
                continue
            value = getattr(obj, f.name)
            if (value is None and not (cls is ir.Entry and f.name == "parent_id")) or (f.name == "extra" and not value) or (f.name in ("synthesized", "other_headers") and not value):
                continue
            out[f.name] = to_json(value)
        if cls is ir.UnknownMessage:
            out = {"role": "unknown", **out}
        return out
    if cls is tuple or cls is list:
        return [to_json(v) for v in obj]
    if cls is frozenset:
        return sorted(obj)
    if isinstance(obj, Mapping):
        return {k: to_json(v) for k, v in obj.items()} if cls is not dict else obj
    return obj


def document_to_json(doc: ir.Document) -> dict[str, Any]:
    return {
        "piconv_ir": list(ir.IR_VERSION),
        "session": to_json(doc.session),
        "leaf_id": doc.leaf_id,
        "lines_read": doc.lines_read,
        "issues": [to_json(i) for i in doc.issues],
        "entries": [to_json(e) for e in doc.entries],
    }


def write_ir(doc: ir.Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    value = document_to_json(doc)
    if options.get("with_context"):
        ctx = doc.context(options.get("leaf"))
        value["context"] = to_json(ctx)
    out.write(dumps(value, indent=bool(options.get("pretty"))))
    out.write(b"\n")
    report.entries_written = len(doc.entries)


def check_ir(data: bytes) -> list[str]:
    from .jsonio import loads

    try:
        value = loads(data)
    except ValueError as exc:
        return [f"line 1: not JSON: {exc}"]
    errors = []
    if value.get("piconv_ir") != list(ir.IR_VERSION):
        errors.append("line 1: piconv_ir version missing or wrong")
    if not isinstance(value.get("entries"), list):
        errors.append("line 1: entries is not a list")
    return errors


@hookimpl
def register_converters(register: Any) -> None:
    register(
        Converter(
            name="ir",
            summary="piconv's neutral intermediate representation as versioned JSON",
            extension=".json",
            media_type="application/json",
            write=write_ir,
            check=check_ir,
            mapping_doc="docs/ir.md",
            options=(
                Option("--pretty", "indent the JSON", takes_value=False),
                Option("--with-context", "add the model-visible context at the leaf", takes_value=False),
            ),
        )
    )
