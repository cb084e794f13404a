"""ASF entry lines: each body serialised once (RFC 8785), its content-addressed id, the line
written after the checks of ``options["validate"]``.

An entry's id is the SHA-256 of its canonical envelope ``{content, parent, ts, type}``, where
``content`` is the SHA-256 of the canonical body (RFC 0001, "Entry hash"). The envelope
members the writer supplies are its own ASCII (entry types, ``sha256:`` ids, canonical
timestamps) with nothing JSON would escape, and its keys are already in JCS order, so the
envelope is spelled directly rather than serialised. The line is the envelope's members,
then the body's canonical bytes as they are: the body is serialised once, for the hash and
for the line.
"""

from __future__ import annotations

import hashlib
from typing import IO, TYPE_CHECKING

import orjson
from piconv.report import Report

from .ids import CanonicalError, normalise
from .jcs import canonical
from .links import Ancestry
from .settings import JSONDict

if TYPE_CHECKING:
    from .linecheck import WriteChecker

__all__ = ["ENVELOPE_MEMBERS", "Emitter", "entry_line"]

ENVELOPE_MEMBERS = frozenset(("type", "id", "parent", "ts"))
"""The members the writer puts before a body's; a body holding one is written as a merge."""
_LINE = orjson.OPT_APPEND_NEWLINE
_sha256 = hashlib.sha256


class Emitter:
    """Writes entry lines to ``out``, each id added to ``ancestry``; with a ``checker``,
    every line is checked before it is written."""

    __slots__ = ("ancestry", "checker", "out", "report", "written")

    def __init__(
        self, out: IO[bytes], report: Report, checker: WriteChecker | None, ancestry: Ancestry
    ) -> None:
        self.out = out
        self.report = report
        self.checker = checker
        self.ancestry = ancestry
        self.written = 0

    def emit(self, type_: str, parent: str | None, ts: str, body: JSONDict, line: int) -> str:
        """Write the entry ``type_`` under ``parent`` with ``body`` (``line``: the pi line it
        comes from, for the report); its id."""
        try:
            data = canonical(body)
        except CanonicalError:
            type_, body, data = self.normalised(type_, body, line)
        parent_json = "null" if parent is None else f'"{parent}"'
        content = _sha256(data).hexdigest()
        envelope = f'{{"content":"sha256:{content}","parent":{parent_json},"ts":"{ts}","type":"{type_}"}}'
        entry_id = "sha256:" + _sha256(envelope.encode()).hexdigest()
        own = ENVELOPE_MEMBERS.isdisjoint(body)
        if own:  # the line: the envelope's members, then the body's bytes after its "{"
            head = f'{{"type":"{type_}","id":"{entry_id}","parent":{parent_json},"ts":"{ts}"'.encode()
            text = head + b"}\n" if len(data) == 2 else b"".join((head, b",", memoryview(data)[1:], b"\n"))
        else:
            text = entry_line(type_, entry_id, parent, ts, data, body)
        checker = self.checker
        if checker is not None:
            if own:
                # The body is the writer's own and already serialised: completed in place
                # into the entry, it is checked without a copy.
                body["type"] = type_
                body["id"] = entry_id
                body["parent"] = parent
                body["ts"] = ts
                entry = body
            else:  # the body's member wins, as written
                entry = {"type": type_, "id": entry_id, "parent": parent, "ts": ts, **body}
            checker.entry(entry, self.written + 2, self.ancestry)
        self.ancestry.add(entry_id, parent)
        self.out.write(text)
        self.written += 1
        return entry_id

    def normalised(self, type_: str, body: JSONDict, line: int) -> tuple[str, JSONDict, bytes]:
        """A body that is not I-JSON, normalised (or, holding a number that is not finite,
        refused), which may change its type; its canonical bytes."""
        try:
            body, records = normalise(body)
        except CanonicalError as exc:  # non-finite number: the RFC says refuse the entry
            self.report.add("entry-refused", line, str(exc))
            # What is left names no member the entry type requires: a namespaced entry.
            body = {
                "legacy_id": body.get("legacy_id"),
                "pi": {"refused": str(exc), "type": type_, "line": line},
            }
            type_ = "pi:refused"
            body, records = normalise(body)  # the pi id may hold a lone surrogate
        if records:
            body["normalised"] = records
            self.report.add("value-normalised", line, f"{len(records)} value(s) made I-JSON")
        return type_, body, canonical(body)


def entry_line(type_: str, entry_id: str, parent: str | None, ts: str, data: bytes, body: JSONDict) -> bytes:
    """One output line: the envelope, then the members of the body whose canonical bytes
    are ``data``. A body member named like an envelope member wins (a merge, serialised)."""
    if ENVELOPE_MEMBERS.isdisjoint(body):
        parent_json = "null" if parent is None else f'"{parent}"'
        head = f'{{"type":"{type_}","id":"{entry_id}","parent":{parent_json},"ts":"{ts}"'.encode()
        return head + b"}\n" if len(data) == 2 else b"".join((head, b",", memoryview(data)[1:], b"\n"))
    return orjson.dumps({"type": type_, "id": entry_id, "parent": parent, "ts": ts, **body}, option=_LINE)
