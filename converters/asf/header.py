"""The ASF header line: pi's session header as an ``agentsession/0.11`` session line."""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO, TYPE_CHECKING

import orjson
from piconv import ir
from piconv.report import Report

from .ids import CanonicalError, canonical_ts, normalise
from .jcs import canonical
from .settings import JSONDict
from .spelling import spelling

if TYPE_CHECKING:
    from .linecheck import WriteChecker

__all__ = ["EPOCH", "FORMAT", "PAYLOAD", "header_of", "write_header"]

FORMAT = "agentsession/0.11"
PAYLOAD = "openresponses/2026-04-24"
EPOCH = "1970-01-01T00:00:00Z"


def header_of(
    info: ir.SessionInfo, entries: Iterable[ir.Entry], lines: ir.SourceLines | None = None
) -> JSONDict:
    """The ASF header for pi's header ``info``. ``entries`` (in file order) is read only as
    far as needed: the first entry's id stands in for a missing session id, the first RFC
    3339 timestamp for a missing creation time."""
    session_id = info.id
    if not session_id:  # rare: a header without an id, or with an empty one (ASF needs one)
        import uuid

        first = next(iter(entries), None)
        # an id holding a lone surrogate has no UTF-8: it is named by its escaped form
        name = f"piconv:{first.id if first is not None else ''}".encode("utf-8", "backslashreplace")
        session_id = str(uuid.uuid5(uuid.NAMESPACE_URL, name.decode()))
    created = canonical_ts(info.created) if info.created else None
    if created is None:
        created = next(
            (canonical_ts(e.timestamp) for e in entries if e.timestamp and canonical_ts(e.timestamp)), EPOCH
        )
    out: JSONDict = {
        "type": "session",
        "format": FORMAT,
        "id": session_id,
        "created_at": created,
        "payload": PAYLOAD,
        "harness": {
            "name": "pi",
            "version": f"session-v{info.source_version}" if info.source_version else "unknown",
        },
    }
    if info.cwd is not None:
        out["cwd"] = info.cwd
    if info.parent_session is not None:
        out["parent_session"] = info.parent_session
    left: JSONDict = {}
    if info.created != created:
        left["timestamp"] = info.created  # null: the header had no (string) timestamp
    if info.id is None:
        left["id_synthesized"] = True
    elif not info.id:
        left["id"] = info.id
    if info.line != 1:
        left["line"] = info.line  # 0: the file had no header line
    if info.extra:
        left["extra"] = dict(info.extra)
    if info.other_headers:
        left["other_headers"] = []
        for ln, value in info.other_headers:
            kept: JSONDict = {"line": ln, "value": value}
            spelling(lines, value, ln, kept)
            left["other_headers"].append(kept)
    if info.line > 0:
        spelling(lines, info, info.line, left)
    if left:
        out["pi"] = left
    return out


def write_header(
    info: ir.SessionInfo,
    entries: Iterable[ir.Entry],
    out: IO[bytes],
    report: Report,
    checker: WriteChecker | None,
    lines: ir.SourceLines | None = None,
) -> None:
    """Write the header line for ``info`` (``entries``, ``lines``: see :func:`header_of`)."""
    head = header_of(info, entries, lines)
    if not info.id:
        report.add("session-id-synthesized", info.line or None, f"header id {info.id!r}: ASF needs one")
    try:
        canonical(head)
    except CanonicalError:  # pi's header may hold lone surrogates or big whole numbers too
        try:
            head, records = normalise(head)
            head["normalised"] = records
            report.add("value-normalised", info.line or None, f"{len(records)} header value(s) made I-JSON")
        except CanonicalError as exc:  # a number that is not finite: written as null
            head, records = normalise(head, refuse_nonfinite=False)
            if records:
                head["normalised"] = records
            report.add("value-normalised", info.line or None, f"header: {exc}, written as null")
    if checker is not None:
        checker.header(head)
    out.write(orjson.dumps(head, option=orjson.OPT_APPEND_NEWLINE))
    if info.other_headers:
        report.add(
            "extra-header-kept",
            None,
            f"{len(info.other_headers)} further header line(s) kept in the header's pi member",
        )
