"""The ``asf`` output format: Agent Session Format (agentsession/0.11) files written from
the IR. Reading ASF is :mod:`piconv.converters.asf.read`, a plugin of its own.

Registered through the same ``register_converters`` hook a third-party plugin uses. Heavy
modules (jsonschema, the writer) load only when a conversion or a check runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any

from piconv.hookspecs import hookimpl
from piconv.registry import Converter

if TYPE_CHECKING:
    from piconv.ir import Document, Issue
    from piconv.report import Report

    from .lines import Source

__all__ = [
    "check",
    "register_converters",
    "validate_asf",
    "write",
]


def write(doc: Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    from .writer import write_asf

    write_asf(doc, out, options, report)


def check(data: bytes) -> list[str]:
    from .filecheck import check as _check

    return _check(data)


def validate_asf(source: Source) -> list[Issue]:
    """Every problem in an ASF file (path, bytes or binary stream), with line numbers."""
    from .filecheck import validate_asf as _validate

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
            # each pi line's member order, kept so the pi file comes back byte for byte
            source_lines="layout",
        )
    )
