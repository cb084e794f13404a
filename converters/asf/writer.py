"""pi IR → ASF (agentsession/0.11) lines, written as entries arrive.

The mapping, row by row, is ``docs/formats/asf.md`` (:mod:`.mapping`). Every pi entry becomes
one or more ASF entries chained parent → child (:mod:`.emit` writes each line); the pi id is
kept as ``legacy_id`` on each, and every pi member ASF has no field for is kept in the
entry's ``pi`` member. Entries are written in file order; one whose parent has not been
written yet waits for it (pi files are nearly always in order already, so little is ever
held). One process converts one session, start to end.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import IO, Any

from piconv import ir
from piconv.report import Report

from .emit import Emitter
from .header import EPOCH, write_header
from .ids import canonical_ts, ts_from_millis
from .links import Ancestry
from .mapping import EDITABLE, Mapper, Written
from .settings import NO_SETTINGS, JSONDict
from .spelling import spelling

__all__ = ["Writer", "write_asf"]


class Writer:
    """The entries of one session, written one pi entry at a time (parents first)."""

    __slots__ = ("emitter", "last_ts", "lines", "mapper", "next_line", "report")

    def __init__(
        self, emitter: Emitter, report: Report, next_line: int, lines: ir.SourceLines | None = None
    ) -> None:
        self.emitter = emitter
        self.report = report
        self.mapper = Mapper(report, emitter.ancestry)
        self.last_ts = EPOCH
        self.next_line = next_line  # the pi line that follows the last pi entry written
        self.lines = lines  # how the pi file's lines were spelled, when the reader kept it

    @property
    def written(self) -> int:
        return self.emitter.written

    def ts_of(self, entry: ir.Entry, left: JSONDict) -> str:
        raw = entry.timestamp
        ts = canonical_ts(raw) if raw is not None else None
        if ts is None:
            message = entry.message
            stamp = getattr(message, "timestamp", None) if message is not None else None
            ts = ts_from_millis(stamp) if type(stamp) in (int, float) else None
            ts = ts or self.last_ts
            self.report.add("ts-synthesized", entry.origin.line, f"entry {entry.id}: no RFC 3339 timestamp")
        if raw is None or raw != ts:
            left["timestamp"] = raw  # null: the pi entry had no (string) timestamp
        self.last_ts = ts
        return ts

    def write_entry(self, entry: ir.Entry) -> None:
        mapper = self.mapper
        entry_id = entry.id
        parent_id = entry.parent_id
        if parent_id is not None:
            record = mapper.written.get(parent_id)
            parent_state = record.state if record is not None and parent_id else NO_SETTINGS
            parent = record.last if record is not None else None
        else:
            parent_state = NO_SETTINGS
            parent = None
        origin = entry.origin
        line = origin.line
        left: JSONDict = {}
        if origin.source_type is not None:
            left["type"] = origin.source_type
        if origin.source_role is not None:
            left["role"] = origin.source_role
        if entry.extra:
            left["extra"] = dict(entry.extra)
        if origin.synthesized:
            left["synthesized"] = sorted(origin.synthesized)
        if line != self.next_line:
            left["line"] = line  # out of file order, or after lines not read
        self.next_line = line + 1
        spelling(self.lines, entry, line, left)
        ts = self.ts_of(entry, left)
        lines, state = mapper.map_body(entry, parent_state, left, parent)
        if parent is None:
            if not lines or lines[0][0] != "config":
                lines.insert(0, ("config", {**parent_state.full()}, False))
            lines[0][1]["replace"] = True  # the first entry of a root carries full settings
        first = last = None
        items: list[str] = []
        final = len(lines) - 1
        emit = self.emitter.emit
        for index, (type_, body, is_item) in enumerate(lines):
            body["legacy_id"] = entry_id
            if type_ == "compaction" and body.get("first_kept") == "":
                body["first_kept"] = last  # the anchor just written
            elif type_ == "branch_summary" and body.get("from") == "":
                body["from"] = last  # the root's config line just written
            if index == final and left:
                body["pi"] = left
            last = emit(type_, last if last is not None else parent, ts, body, line)
            if first is None:
                first = last
            if is_item:
                items.append(last)
        assert first is not None and last is not None
        mapper.written[entry_id] = Written(
            first, last, state, tuple(items) if items else (), bool(items) and type(entry.message) in EDITABLE
        )


def write_asf(doc: ir.Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    """The registry's write function: ``doc`` as an ASF file on ``out``, each entry
    written as soon as it is made. With ``options["validate"]`` every line is checked
    before it is written (``linecheck.WriteChecker``); a failure raises
    :class:`piconv.ValidationFailed` naming the output line."""
    _write_document(doc, out, options, report)


def start(
    info: ir.SessionInfo,
    entries: Iterable[ir.Entry],
    out: IO[bytes],
    options: Mapping[str, Any],
    report: Report,
    lines: ir.SourceLines | None = None,
) -> Writer:
    """Write the header line; the writer for the entries that follow. ``lines``: how the
    pi file's lines were spelled (:attr:`piconv.ir.Document.source_lines`)."""
    checker = None
    if options.get("validate"):
        from .linecheck import WriteChecker

        checker = WriteChecker(info.source_path)
    write_header(info, entries, out, report, checker, lines)
    return Writer(Emitter(out, report, checker, Ancestry()), report, info.line + 1, lines)


def _write_document(doc: ir.Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    writer = start(doc.session, doc.entries, out, options, report, doc.source_lines)
    waiting: dict[str, list[ir.Entry]] = {}
    present = {e.id for e in doc.entries}

    def write_with_children(entry: ir.Entry) -> None:
        stack = [entry]
        while stack:
            current = stack.pop()
            writer.write_entry(current)
            stack.extend(reversed(waiting.pop(current.id, [])))

    for entry in doc.entries:
        parent = entry.parent_id
        if parent is not None and parent not in writer.mapper.written and parent in present:
            waiting.setdefault(parent, []).append(entry)  # parents must precede children
            report.add("entry-reordered", entry.origin.line)
            continue
        if parent is not None and parent not in present:
            report.add(
                "parent-missing", entry.origin.line, f"parentId {parent!r} names no entry: written as a root"
            )
        write_with_children(entry)
    for parent_id, children in list(waiting.items()):  # a cycle the core left: break it
        for child in children:
            report.add("parent-cycle", child.origin.line)
            if child.id not in writer.mapper.written:
                write_with_children(child)
        waiting.pop(parent_id, None)
    report.entries_written = writer.written
