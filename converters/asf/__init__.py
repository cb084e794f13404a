"""The ``asf`` format: Agent Session Format (agentsession/0.11) files, written (pi
sessions as ASF) and read (any ASF file into the IR).

Registered through the same ``register_converters`` and ``register_readers`` hooks a
third-party plugin uses. Heavy modules (jsonschema, the writer, the reader) load only
when a conversion, a check or a read runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any

from piconv import Reader
from piconv.hookspecs import hookimpl
from piconv.registry import Converter

if TYPE_CHECKING:
    from piconv.ir import Context, Document, Issue
    from piconv.report import Report

    from .reader import Source

__all__ = [
    "check",
    "register_converters",
    "register_readers",
    "request_context",
    "validate_asf",
    "write",
]


def write(doc: Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    from .writer import write_asf

    write_asf(doc, out, options, report)


def check(data: bytes) -> list[str]:
    from .validate import check as _check

    return _check(data)


def validate_asf(source: Source) -> list[Issue]:
    """Every problem in an ASF file (path, bytes or binary stream), with line numbers."""
    from .validate import validate_asf as _validate

    return _validate(source)


@hookimpl
def register_converters(register: Any) -> None:
    register(
        Converter(
            name="asf",
            summary="Agent Session Format (agentsession/0.11): content-addressed JSONL, whole tree, nothing lost",
            extension=".jsonl",
            media_type="application/x-ndjson",
            write=write,
            check=check,
            mapping_doc="docs/formats/asf.md",
            aliases=("agentsession",),
            checks_while_writing=True,
            takes_leaf=False,  # the whole tree, always
        )
    )


def detect(head: bytes) -> float:
    from .detection import detect as _detect

    return _detect(head)


def read(stream: IO[bytes], options: Mapping[str, Any]) -> Document:
    from .reading import read_asf

    return read_asf(stream, options)


def request_context(document: Document, leaf_id: str | None = None) -> Any:
    """RFC 0001's context at ``leaf_id`` of a document the ``asf`` reader read: the
    request settings (``.settings``) and items (``.items``, each from the entry
    ``.item_entries`` names), whatever rule ``document.context()`` follows."""
    from .rule import AsfContext

    rule = document.context_builder
    if not isinstance(rule, AsfContext):
        raise ValueError("this document was not read by the asf reader")
    return rule.request(document, leaf_id)


def context(document: Document, leaf_id: str | None) -> Context:
    """For a document a reader built without a rule: RFC 0001's, over nothing (every
    document the ``asf`` reader returns carries its own)."""
    rule = document.context_builder
    if rule is None:
        raise NotImplementedError("an asf document carries its context rule")
    return rule(document, leaf_id)


@hookimpl
def register_readers(register: Any) -> None:
    register(
        Reader(
            name="asf",
            summary="Agent Session Format (agentsession/0.11), from piconv or any other writer",
            detect=detect,
            read=read,
            extensions=(".jsonl",),
            context=context,
            mapping_doc="docs/formats/asf.md",
            aliases=("agentsession",),
        )
    )
