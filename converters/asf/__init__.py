"""The ``asf`` output format: pi sessions as Agent Session Format (agentsession/0.11) files.

Registered through the same ``register_converters`` hook a third-party plugin uses.
Heavy modules (jsonschema, the writer) load only when a conversion or check runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any

from piconv.hookspecs import hookimpl
from piconv.registry import Converter

if TYPE_CHECKING:
    from piconv.ir import Document, Issue
    from piconv.report import Report
    from piconv.stream import SessionStream

    from .reader import Source

__all__ = ["check", "register_converters", "validate_asf", "write", "write_stream"]


def write(doc: Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    from .writer import write_asf

    write_asf(doc, out, options, report)


def write_stream(stream: SessionStream, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    from .writer import write_asf_stream

    write_asf_stream(stream, out, options, report)


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
            write_stream=write_stream,
            takes_leaf=False,  # the whole tree, always
        )
    )
