"""The ``asf`` input format: any Agent Session Format (agentsession/0.11) file, from
piconv or another writer, read into the IR.

Registered through the same ``register_readers`` hook a third-party reader uses. Nothing
of the reading is imported until a file is detected or read. Module by module: ``lines``
(ASF's lines, read by the one JSONL line reader, ``piconv.jsonl``), ``document`` (the
file into the IR), ``entries``, ``restore`` and ``unnormalise`` (piconv's own records back
as pi wrote them), ``foreign``
(another writer's items as IR messages), ``context`` (RFC 0001's context at a leaf),
``rule`` (the context rule a document carries), ``detection``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any

from piconv import Reader
from piconv.hookspecs import hookimpl

if TYPE_CHECKING:
    from piconv.ir import Context, Document

__all__ = ["detect", "read", "register_readers", "request_context"]


def detect(head: bytes) -> float:
    from .detection import detect as _detect

    return _detect(head)


def read(stream: IO[bytes], options: Mapping[str, Any]) -> Document:
    from .document import read_asf

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
