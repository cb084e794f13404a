"""The ``ir`` output format: the IR as versioned JSON (like pandoc's ``-t json``).

Documented in ``docs/ir.md``. Every object is written with its fields in declaration
order; absent (``None``) fields and empty ``extra`` mappings are left out; each part,
message and entry body carries its tag (``type``, ``role``, ``kind``).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator, Mapping
from typing import IO, Any

from . import ir
from .hookspecs import hookimpl
from .jsonio import dumps, finite, report_nulls
from .outputformat import Converter, Option
from .records import Frozen, field_defaults, replace
from .report import Report
from .validation import MAX_ERRORS, is_valid, schema_errors

PART_TAGS: dict[type, str] = {cls: cls.type for cls in (ir.Text, ir.Image, ir.Reasoning, ir.ToolCall)}
PART_TAGS[ir.UnknownPart] = "unknown"  # its ``type`` is the source's own


# How a field is written: always, unless it is None, unless it is empty.
_ALWAYS, _UNLESS_NONE, _UNLESS_EMPTY = 0, 1, 2
_AS_IS = frozenset({str, int, float, bool, type(None), dict})
Plan = tuple[dict[str, str], tuple[tuple[str, int], ...]]
_PLANS: dict[type, Plan] = {}


def _plan(cls: type) -> Plan:
    """The tag member and the fields ``to_json`` writes for a dataclass, in order."""
    tag: dict[str, str] = {}
    if cls is ir.UnknownMessage:
        tag["role"] = "unknown"
    elif cls in PART_TAGS:
        tag["type"] = PART_TAGS[cls]
    elif hasattr(cls, "role"):
        tag["role"] = cls.role  # type: ignore[attr-defined]
    elif hasattr(cls, "kind") and cls is not ir.Entry:
        tag["kind"] = cls.kind  # type: ignore[attr-defined]
    fields = []
    for name in field_defaults(cls):
        if name.startswith("_") or name == "context_builder":
            continue
        if cls is ir.Entry and name == "parent_id":
            mode = _ALWAYS
        elif name in ("extra", "synthesized", "other_headers"):
            mode = _UNLESS_EMPTY
        else:
            mode = _UNLESS_NONE
        fields.append((name, mode))
    plan = _PLANS[cls] = (tag, tuple(fields))
    return plan


def to_json(obj: Any) -> Any:
    """Any IR object as a JSON value."""
    cls = type(obj)
    if cls in _AS_IS:
        return obj
    plan = _PLANS.get(cls)
    if plan is None:
        if cls is tuple or cls is list:
            return [to_json(v) for v in obj]
        if cls is frozenset:
            return sorted(obj)
        if isinstance(obj, Frozen) or dataclasses.is_dataclass(obj):
            plan = _plan(cls)
        elif isinstance(obj, Mapping):
            return {k: to_json(v) for k, v in obj.items()}
        else:
            return obj
    tag, fields = plan
    out = dict(tag)
    for name, mode in fields:
        value = getattr(obj, name)
        if value is None:
            if mode == _ALWAYS:
                out[name] = None
        elif mode == _UNLESS_EMPTY and not value:
            continue
        elif type(value) in _AS_IS:
            out[name] = value
        else:
            out[name] = to_json(value)
    return out


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
    if options.get("leaf") is not None and not options.get("with_context"):
        from .errors import UsageError

        raise UsageError(
            "--to ir writes the whole tree; --leaf applies only with --with-context (the context at that leaf)",
            path=report.source,
        )
    if not options.get("pretty") and not any(issue.code == "lone-surrogate" for issue in doc.issues):
        write_streamed(doc, out, options, report)
        return
    value = document_to_json(doc)
    if options.get("with_context"):
        ctx = doc.context(options.get("leaf"))
        value["context"] = to_json(ctx)
    if any(issue.code == "infinite-number" for issue in doc.issues):
        value = finite(value)  # as dumps() writes it: null for a number beyond the double range
    if options.get("validate"):
        errors = value_errors(value)
        if errors:
            from .errors import ValidationFailed

            shown = "; ".join(errors[:5])
            raise ValidationFailed(
                f"ir output failed validation ({len(errors)} problems): {shown}", path=report.source
            )
    out.write(dumps(value, indent=bool(options.get("pretty"))))
    out.write(b"\n")
    report.entries_written = len(doc.entries)
    report_nulls(report, doc.issues)


def write_streamed(doc: ir.Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    """The document written entry by entry, each checked as it is written (the schema's
    ``Entry``, then the references once every id is known): the same bytes as the whole
    value written at once, without holding the whole value and its bytes. (Indented
    output, and a document holding a lone surrogate, which the stdlib then writes with
    every non-ASCII character escaped, are written whole.)"""
    validate = bool(options.get("validate"))
    nulls = any(issue.code == "infinite-number" for issue in doc.issues)
    head = document_to_json(replace(doc, entries=()))  # type: ignore[type-var]
    context = to_json(doc.context(options.get("leaf"))) if options.get("with_context") else None
    if nulls:
        head = finite(head)
        context = finite(context) if context is not None else None
    if validate:
        whole = {**head, "context": context} if context is not None else head
        if not is_valid(__package__, SCHEMA, whole):
            _fail(
                report,
                [
                    f"line 1: {m}"
                    for m in itertools.islice(schema_errors(__package__, SCHEMA, whole), MAX_ERRORS)
                ],
            )
    start = dumps(head)
    assert start.endswith(b"[]}")
    out.write(start[:-2])
    ids: set[str] = set()
    parents: list[tuple[int, str]] = []
    for i, entry in enumerate(doc.entries):
        value = to_json(entry)
        if nulls:
            value = finite(value)
        if validate:
            if not is_valid(__package__, SCHEMA, value, "Entry"):
                errors = schema_errors(__package__, SCHEMA, value, "Entry", ("entries", i))
                _fail(report, [f"line 1: {m}" for m in itertools.islice(errors, MAX_ERRORS)])
            if value["id"] in ids:
                _fail(report, [f"line 1: entries/{i}/id: {value['id']!r} is the id of an earlier entry"])
            ids.add(value["id"])
            if value["parent_id"] is not None:
                parents.append((i, value["parent_id"]))
        if i:
            out.write(b",")
        out.write(dumps(value))
    if validate:
        errors = [f"entries/{i}/parent_id: no entry has the id {p!r}" for i, p in parents if p not in ids]
        if head["leaf_id"] is not None and head["leaf_id"] not in ids:
            errors.append(f"leaf_id: no entry has the id {head['leaf_id']!r}")
        if context is not None:
            if context.get("leaf_id") is not None and context["leaf_id"] not in ids:
                errors.append(f"context/leaf_id: no entry has the id {context['leaf_id']!r}")
            for i, message in enumerate(context["messages"]):
                entry_id = message.get("entry_id")
                if entry_id is not None and entry_id not in ids:
                    errors.append(f"context/messages/{i}/entry_id: no entry has the id {entry_id!r}")
        if errors:
            _fail(report, [f"line 1: {m}" for m in errors[:MAX_ERRORS]])
    out.write(b"]")
    if context is not None:
        out.write(b',"context":')
        out.write(dumps(context))
    out.write(b"}\n")
    report.entries_written = len(doc.entries)
    report_nulls(report, doc.issues)


def _fail(report: Report, errors: list[str]) -> None:
    from .errors import ValidationFailed

    shown = "; ".join(errors[:5])
    raise ValidationFailed(
        f"ir output failed validation ({len(errors)} problems): {shown}", path=report.source
    )


SCHEMA = "schema/ir.schema.json"


def check_ir(data: bytes) -> list[str]:
    """Validate ``--to ir`` output (see :func:`value_errors`)."""
    from .validation import parse_json

    try:
        value = parse_json(data)
    except ValueError as exc:
        return [f"line 1: not JSON: {exc}"]
    return value_errors(value)


def value_errors(value: Any) -> list[str]:
    """The errors of an IR JSON value against the IR schema (``core/schema/ir.schema.json``),
    then what a schema cannot say: entry ids are unique, and every parent, the leaf and
    each context message's entry are entries of the document. Writing validates the value
    it is about to write, so the output is not read back."""
    from .validation import MAX_ERRORS, is_valid, schema_errors

    if not is_valid(__package__, SCHEMA, value):
        return [
            f"line 1: {m}" for m in itertools.islice(schema_errors(__package__, SCHEMA, value), MAX_ERRORS)
        ]
    return [f"line 1: {m}" for m in itertools.islice(reference_errors(value), MAX_ERRORS)]


def reference_errors(value: dict[str, Any]) -> Iterator[str]:
    """The references of a schema-valid IR document that do not resolve."""
    ids: set[str] = set()
    entries = value["entries"]
    for i, entry in enumerate(entries):
        if entry["id"] in ids:
            yield f"entries/{i}/id: {entry['id']!r} is the id of an earlier entry"
        ids.add(entry["id"])
    for i, entry in enumerate(entries):
        parent = entry["parent_id"]
        if parent is not None and parent not in ids:
            yield f"entries/{i}/parent_id: no entry has the id {parent!r}"
    leaf = value["leaf_id"]
    if leaf is not None and leaf not in ids:
        yield f"leaf_id: no entry has the id {leaf!r}"
    context = value.get("context")
    if context is not None:
        if context.get("leaf_id") is not None and context["leaf_id"] not in ids:
            yield f"context/leaf_id: no entry has the id {context['leaf_id']!r}"
        for i, message in enumerate(context["messages"]):
            entry_id = message.get("entry_id")
            if entry_id is not None and entry_id not in ids:
                yield f"context/messages/{i}/entry_id: no entry has the id {entry_id!r}"


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
            checks_while_writing=True,
            mapping_doc="docs/ir.md",
            options=(
                Option("--pretty", "indent the JSON", takes_value=False),
                Option("--with-context", "add the model-visible context at the leaf", takes_value=False),
            ),
        )
    )
