"""The ``pi`` input format: pi coding-agent session files, registered through the same
``register_readers`` hook a third-party reader uses.

Registering it imports nothing of the reader: ``detect`` parses the first lines with
orjson, and ``read`` and ``context`` import the reader, the session builder and pi's
context rule when they are first called.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any

import orjson

from ..hookspecs import hookimpl
from ..inputformat import Reader

if TYPE_CHECKING:
    from ..facts import SessionScan
    from ..ir import Context, Document

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

    problems: list[Any] = []
    try:
        return stream_document(
            iter_lines(stream, recover_glued=bool(options.get("recover_glued"))),
            options.get("source_path"),
            problems,
        )
    except NotASession as exc:
        if exc.lines_read == 0:
            raise InputError("empty file: not a pi session") from None
        first = problems[0] if problems else None
        why = f" (line {first.line}: {first.message})" if first else ""
        raise InputError(f"not a pi session: no session header and no session entries{why}") from None


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
