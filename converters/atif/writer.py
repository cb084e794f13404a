"""Writing trajectories: one to a stream (the current leaf's, or the one ``--leaf``
names), or every leaf's into a directory (``-o DIR/``): ``<session-id>.json`` for the
current leaf, ``<session-id>_<leaf-id>.json`` for the others, the images beside them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import IO, Any

from piconv import Report
from piconv.ir import Document

from .branches import Forks, document_name
from .content import Media
from .trajectory import WRITTEN_BY, build
from .validate import models, require_valid


def dumps(value: Any) -> bytes:
    """The document as indented JSON and a final newline (member order kept)."""
    import orjson

    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n"
    except TypeError:
        # orjson refuses lone surrogates (kept from a session's text); the standard
        # encoder escapes them
        import json

        return json.dumps(value, ensure_ascii=True, indent=2).encode() + b"\n"


def _media(doc: Document, directory: str | None, report: Report) -> Media:
    return Media(directory, doc.session.id, report)


def write_one(doc: Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    validate = bool(options.get("validate"))
    if validate:
        models()  # before any work: the clear error when the package is missing
    leaf = options.get("leaf") or doc.leaf_id
    if leaf is None:
        value = _empty(doc)
    else:
        output = options.get("output_path")
        directory = os.path.dirname(os.path.abspath(output)) if isinstance(output, str) else None
        value = build(doc, leaf, Forks(doc), _media(doc, directory, report), report)
    if validate:
        require_valid(value, "", report.source)
    out.write(dumps(value))
    report.entries_written = len(value["steps"])


def write_directory(doc: Document, directory: str, options: Mapping[str, Any], report: Report) -> None:
    from piconv import write_into_folder

    validate = bool(options.get("validate"))
    if validate:
        models()
    if options.get("leaf"):
        leaves = [str(options["leaf"])]  # --leaf: that leaf's trajectory only
    else:
        leaves = [leaf.id for leaf in doc.leaves()]
        if doc.leaf_id is not None and doc.leaf_id not in leaves:
            leaves.append(doc.leaf_id)
    forks = Forks(doc)
    media = _media(doc, directory, report)
    written = 0
    owner = _owned_by(doc.session.id)
    documents: list[tuple[str, str | None]] = []
    taken: set[str] = set()
    for leaf in leaves:
        name = document_name(doc.session.id, leaf, leaf == doc.leaf_id)
        stem, n = name.removesuffix(".json"), 1
        while name in taken:  # two ids alike once made safe for a file name
            n += 1
            name = f"{stem}_{n}.json"
        taken.add(name)
        documents.append((name, leaf))
    if not documents:
        documents = [(document_name(doc.session.id, "", True), None)]
    for name, leaf in documents:
        value = build(doc, leaf, forks, media, report) if leaf is not None else _empty(doc)
        if validate:
            require_valid(value, name, report.source)
        write_into_folder(directory, name, dumps(value), replaces=owner)
        written += len(value["steps"])
    report.entries_written = written
    report.notes["trajectories"] = f"{len(documents)} written into {directory}"


def _owned_by(session_id: str | None) -> Any:
    """Whether a file already where a trajectory goes is one piconv wrote of this session
    (then it is replaced; anything else there, another tool's trajectory of the same
    session too, is left, with an error)."""

    def owns(existing: bytes) -> bool:
        import json

        try:
            value = json.loads(existing)
        except (ValueError, UnicodeDecodeError):
            return False
        extra = value.get("extra") if isinstance(value, dict) else None
        return (
            isinstance(extra, dict)
            and extra.get("written_by") == WRITTEN_BY
            and str(value.get("schema_version", "")).startswith("ATIF-")
            and value.get("session_id") == session_id
        )

    return owns


def _empty(doc: Document) -> dict[str, Any]:
    """A session without entries: a trajectory with one system step saying so (ATIF
    wants at least one step)."""
    from .trajectory import EMPTY_STEP, SCHEMA_VERSION, agent_version

    out: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    if doc.session.id is not None:
        out["session_id"] = doc.session.id
    out["agent"] = {"name": "pi", "version": agent_version(doc)}
    out["steps"] = [EMPTY_STEP]
    out["final_metrics"] = {
        "total_prompt_tokens": 0,
        "total_completion_tokens": 0,
        "total_cached_tokens": 0,
        "total_steps": 0,
        "extra": {"total_tokens": 0},
    }
    out["extra"] = {"written_by": WRITTEN_BY}
    return out
