"""The ``pi`` input format: pi coding-agent session files, registered through the same
``register_readers`` hook a third-party reader uses.

Registering it imports nothing of the reader: ``detect`` parses the first lines with
orjson, and ``read`` and ``context`` import the reader, the session builder and pi's
context rule when they are first called.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any

import orjson

from ..hookspecs import hookimpl
from ..inputformat import Reader

if TYPE_CHECKING:
    from ..facts.scan import SessionScan
    from ..ir import Context, Document, SourceLines

_ASF = b"agentsession/"


def detect(head: bytes) -> float:
    """1 for a file opening with a pi session header; 0.5 for one without a header whose
    lines look like pi entries (a version 1 file whose header was lost: the pi reader
    reads it and reports what is missing); 0 otherwise. Oh-My-Pi's title line before the
    header is passed over. A header naming an
    ``agentsession/`` format is an ASF file, not pi. Lines that do not parse are passed
    over, as the reader passes over them."""
    first = True
    for raw in head.split(b"\n"):
        line = raw.strip()
        if first and line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]
        if not line:
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            import json

            try:  # orjson refuses a lone surrogate escape, which the reader keeps
                value = json.loads(line)
            except (ValueError, RecursionError):
                continue  # a bad line, or the head cut inside one
        if type(value) is not dict:
            continue
        kind = value.get("type")
        if first and kind == "title":
            continue  # Oh-My-Pi's title line, before its header
        if first and kind == "session":
            fmt = value.get("format")
            return 0.0 if type(fmt) is str and fmt.encode("utf-8", "replace").startswith(_ASF) else 1.0
        first = False
        if type(kind) is str and ("id" in value or "parentId" in value or "message" in value):
            return 0.5
    return 0.0


def read(stream: IO[bytes], options: Mapping[str, Any]) -> Document:
    from ..errors import InputError
    from ..jsonl import iter_lines
    from .session import NotASession, stream_document

    keep = options.get("keep_source")
    problems: list[Any] = []
    items: Any = iter_lines(stream, recover_glued=bool(options.get("recover_glued")), keep_raw=bool(keep))
    items = _refusing_asf(items)
    spelled: dict[int, tuple[bytes | None, Any] | None] = {}
    if keep:
        items = _spelling(items, spelled, layout=keep == "layout")
    try:
        doc = stream_document(items, options.get("source_path"), problems)
    except NotASession as exc:
        if exc.lines_read == 0:
            raise InputError("empty file: not a pi session") from None
        first = problems[0] if problems else None
        why = f" (line {first.line}: {first.message})" if first else ""
        raise InputError(f"not a pi session: no session header and no session entries{why}") from None
    if keep:
        object.__setattr__(doc, "source_lines", _source_lines(doc, spelled))
    return doc


def _refusing_asf(items: Iterator[Any]) -> Iterator[Any]:
    """The reader's items, unless the first object read is an ASF header: such a file
    is no pi session, whatever ``--from pi`` says (pi would load it as an empty one)."""
    from ..errors import InputError
    from ..jsonl import Record

    first = True
    for item in items:
        if first and type(item) is Record:
            first = False
            fmt = item.value.get("format") if item.value.get("type") == "session" else None
            if type(fmt) is str and fmt.startswith("agentsession/"):
                shown = fmt if len(fmt) <= 40 else fmt[:37] + "..."
                raise InputError(f"an ASF file ({shown}), not a pi session: read it with --from asf")
        yield item


def _spelling(
    items: Iterator[Any], spelled: dict[int, tuple[bytes | None, Any] | None], *, layout: bool
) -> Iterator[Any]:
    """The reader's items, noting how each line was spelled: its bytes, or its layout
    (``piconv.jsonl.layout_of``) and its bytes only where the layout cannot give them
    back. A line holding several objects (``--recover-glued``) is noted as none."""
    from ..jsonl import Record, layout_of

    for item in items:
        if type(item) is Record and item.raw is not None:
            if item.line in spelled:
                spelled[item.line] = None  # glued objects: each is written on a line of its own
            elif layout:
                found = layout_of(item.value, item.raw)
                spelled[item.line] = (bytes(item.raw) if found is None else None, found)
            else:
                spelled[item.line] = (bytes(item.raw), None)
        yield item


def _source_lines(doc: Document, spelled: dict[int, tuple[bytes | None, Any] | None]) -> SourceLines:
    """The document's :class:`~piconv.ir.SourceLines`: each line's spelling with the
    object the reader finally made of it (after renaming and repairs)."""
    from ..ir import SourceLines

    lines = SourceLines()
    made: list[tuple[int, Any]] = [(e.origin.line, e) for e in doc.entries]
    if doc.session.line > 0:
        made.append((doc.session.line, doc.session))
    made.extend(doc.session.other_headers)
    for line, obj in made:
        found = spelled.get(line)
        if found is not None:
            lines.add(line, obj, found[0], found[1])
    return lines


def context(document: Document, leaf_id: str | None) -> Context:
    from .context import build_context

    return build_context(document, leaf_id)


def scan(data: bytes, options: Mapping[str, Any]) -> SessionScan | None:
    from .scan import scan as scan_bytes

    return scan_bytes(data, options)


PI = Reader(
    name="pi",
    summary="pi coding-agent session (JSONL, session versions 1 to 3)",
    detect=detect,
    read=read,
    extensions=(".jsonl",),
    context=context,
    mapping_doc="docs/formats/pi.md",
    scan=scan,
)


@hookimpl
def register_readers(register: Any) -> None:
    register(PI)
