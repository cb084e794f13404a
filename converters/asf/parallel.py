"""One large ASF conversion on two processes.

Entry ids chain (each hashes its parent's id), so the file cannot simply be cut in two
and each half converted alone. What can be split is the costly part: mapping an entry,
serialising its body canonically and hashing it depend only on the entry and on a little
state (the settings in force, the call ids taken, the last timestamp), never on ids.

So a forked worker reads the whole file. Over the first part it keeps only that state
(:class:`_StateWriter` maps no message that leaves the state as it is); over the rest it
maps, serialises, hashes and checks each entry as the one-process writer does, writing
each body to a file and recording its type, timestamp, body hash and parent (an earlier
record, or a pi entry of the first part), and hands them over in batches. Meanwhile this
process writes the first part as usual; then it takes the batches as they come and, in
order, computes each envelope id, which needs only the parent's id and the body hash, and
writes the line. Entries whose bodies
name other entries' ids (compactions, branch summaries, labels, context edits) are rare,
and the worker hands them over whole: this process writes them with the state the worker
sends along. The output is the one-process output, byte for byte; the tests hold the two
to it on every corpus file, split at many places.

Anything the worker cannot do (a file that needs the whole document, an output that fails
validation, any error) makes the conversion raise ``NeedsWholeSession`` and start over on
the whole document, in one process, which also words a validation failure exactly.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pickle
import shutil
import signal
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

from piconv import ir
from piconv.report import Report

from .ids import envelope_id_plain
from .writer import (
    _ENVELOPE,
    _NO_SETTINGS,
    Settings,
    _sha256,
    _Writer,
    assistant_settings,
    entry_line,
)

MIN_BYTES = 8 * 1024 * 1024
"""Below this input size one process is quicker than forking a second."""

FIRST_SHARE = 0.5
"""The share of the input (in bytes) this process converts itself; the worker maps and
hashes the rest, and this process stitches it in. The worker also reads the first part
again (for the state), this process stitches the second: on the 100 MiB bench they spent
about the same CPU time at one half (this process ~0.2 s more, from before the fork)."""

# Bodies that name other entries' ASF ids, or ask whether one entry is on another's path.
_HANDED_OVER = (ir.Compaction, ir.BranchSummary, ir.Label, ir.ContextEdit)
# Entry bodies after which the settings and the call ids are those of the parent.
_STATE_KEEPING_MESSAGES = (ir.UserMessage, ir.ToolResult, ir.ExtensionMessage, ir.ShellCommand, ir.SummaryMessage, ir.UnknownMessage)
_PLACEHOLDER = "sha256:" + "0" * 64  # an id of the right shape, for the schema check alone
_NO_BODY: dict[str, Any] = {}


def split_line(source: Any, share: float) -> int | None:
    """The number of the last line this process converts: the line holding the byte at
    ``share`` of the input (``None``: too small to split, or not a file or bytes)."""
    if isinstance(source, (bytes, bytearray)):
        size = len(source)
        if size < MIN_BYTES:
            return None
        cut = int(size * share)
        return source.count(b"\n", 0, cut) + 1
    try:
        size = os.path.getsize(source)
    except (OSError, TypeError):
        return None
    if size < MIN_BYTES:
        return None
    cut = int(size * share)
    lines = 1
    with open(source, "rb", buffering=0) as fh:
        while cut > 0:
            chunk = fh.read(min(cut, 1 << 22))
            if not chunk:
                break
            lines += chunk.count(b"\n")
            cut -= len(chunk)
    return lines


class _Discard(Report):
    """A report nothing is kept in (the first part is reported by the main process)."""

    def add(self, code: str, line: int | None = None, detail: str | None = None, count: int = 1) -> None:
        pass


class _Recorder(Report):
    """A report that records each addition among the worker's records, in order."""

    def __init__(self, records: list[tuple[Any, ...]]) -> None:
        super().__init__(format="asf")
        self.records = records

    def add(self, code: str, line: int | None = None, detail: str | None = None, count: int = 1) -> None:
        self.records.append(("r", code, line, detail, count))


@dataclasses.dataclass
class _StateWriter(_Writer):
    """Keeps the state the rest of the file needs and writes nothing: a pi entry's ASF ids
    are left to the main process and stand as the pi id itself."""

    def emit(self, type_: str, parent: Any, ts: str, body: dict[str, Any], line: int) -> str:
        return ""

    def write_entry(self, entry: ir.Entry) -> None:
        body = entry.body
        message = body.message if type(body) is ir.MessageBody else None
        parent_state = self.state.get(entry.parent_id, _NO_SETTINGS) if entry.parent_id else _NO_SETTINGS
        if type(message) is ir.AssistantMessage:
            # what map_assistant changes: the settings, and the call ids it hands out
            state = assistant_settings(parent_state, message.model)
            if type(message.content) is not str:
                for part in message.content or ():
                    if type(part) is ir.ToolCall:
                        self.call_id(part.call_id, entry.origin.line)
            self.keep(entry, state)
        elif type(message) in _STATE_KEEPING_MESSAGES or (message is None and type(body) not in (ir.ModelChange, ir.ReasoningLevelChange)):
            self.keep(entry, parent_state)
        else:  # system messages, model and thinking level changes: mapped as usual
            super().write_entry(entry)
            self.asf_ids[entry.id] = (entry.id, entry.id)

    def keep(self, entry: ir.Entry, state: Settings) -> None:
        """What write_entry leaves behind for an entry, without mapping it."""
        self.ts_of(entry, {})
        self.next_line = entry.origin.line + 1
        self.asf_ids[entry.id] = (entry.id, entry.id)
        self.state[entry.id] = state


@dataclasses.dataclass
class _DetachedWriter(_Writer):
    """Maps, serialises, hashes and checks entries as the one-process writer does, but
    records each one (its id is computed later, by the main process)."""

    records: list[tuple[Any, ...]] = dataclasses.field(default_factory=list)
    bodies: Any = None
    count: int = 0

    def emit(self, type_: str, parent: Any, ts: str, body: dict[str, Any], line: int) -> Any:
        type_, body, data = self.serialise(type_, body, line)
        if self.checker is not None:
            shape = {"type": type_, "id": _PLACEHOLDER, "parent": None if parent is None else _PLACEHOLDER, "ts": ts, **body}
            self.checker.shape(shape, 0)
        self.bodies.write(data)
        # the body travels only when a member is named like an envelope member (see entry_line)
        self.records.append(("e", type_, parent, ts, _sha256(data).hexdigest(), len(data), _NO_BODY if _ENVELOPE.isdisjoint(body) else body))
        number = self.count
        self.count += 1
        return number

    def write_entry(self, entry: ir.Entry) -> None:
        if type(entry.body) in _HANDED_OVER:
            parent_state = self.state.get(entry.parent_id, _NO_SETTINGS) if entry.parent_id else _NO_SETTINGS
            self.records.append(("d", entry, parent_state, self.last_ts, self.next_line))
            report, self.report = self.report, _Discard(format="asf")  # the main process reports it
            try:
                self.ts_of(entry, {})
            finally:
                self.report = report
            self.next_line = entry.origin.line + 1
            self.asf_ids[entry.id] = (entry.id, entry.id)
            self.state[entry.id] = parent_state
            return
        super().write_entry(entry)
        first, last = self.asf_ids[entry.id]
        self.records.append(("p", entry.id, first, last, self.item_ids.get(entry.id), entry.id in self.editable))


BATCH = 2048
"""Records per batch: the main process stitches each batch in as soon as the worker has
written it, so stitching overlaps the worker's own work."""

_BATCH_READY = b"b"
_DONE = b"e"


class _Batches:
    """The worker's side of the hand-over: bodies go to one file, records in pickled
    batches to another, and a byte on a pipe says each batch is complete (a pipe alone
    would fill up and stop the worker while the main process is still busy)."""

    def __init__(self, folder: str, notify: int) -> None:
        self.bodies = open(os.path.join(folder, "bodies"), "wb", buffering=1 << 20)  # noqa: SIM115
        self.records_file = open(os.path.join(folder, "records"), "wb")  # noqa: SIM115
        self.notify = notify

    def send(self, records: list[tuple[Any, ...]]) -> None:
        self.bodies.flush()
        pickle.dump(records, self.records_file, protocol=pickle.HIGHEST_PROTOCOL)
        self.records_file.flush()
        os.write(self.notify, _BATCH_READY)
        records.clear()

    def finish(self, account: tuple[Any, ...]) -> None:
        self.bodies.close()
        pickle.dump(account, self.records_file, protocol=pickle.HIGHEST_PROTOCOL)
        self.records_file.close()
        os.write(self.notify, _DONE)


def _worker(stream: Any, last_line: int, validate: bool, folder: str, notify: int) -> None:
    """The forked worker: the state over lines up to ``last_line``, then the records."""
    source = stream.reopen()
    state = _StateWriter(out=None, report=_Discard(format="asf"), next_line=stream.session.line + 1)
    entries: Iterator[ir.Entry] = iter(source)
    entry = None
    for entry in entries:
        if entry.origin.line > last_line:
            break
        state.write_entry(entry)
    else:
        entry = None
    records: list[tuple[Any, ...]] = []
    checker = None
    if validate:
        from .validate import WriteChecker

        checker = WriteChecker(None)
        checker.call_ids = set(state.call_ids)  # each call id handed out went into an item
    batches = _Batches(folder, notify)
    fields = {f.name: getattr(state, f.name) for f in dataclasses.fields(_Writer)}
    fields.update(report=_Recorder(records), checker=checker)
    rest = _DetachedWriter(**fields, records=records, bodies=batches.bodies)
    if entry is not None:
        write = rest.write_entry
        write(entry)
        for entry in entries:
            write(entry)
            if len(records) >= BATCH:
                batches.send(records)
    if records:
        batches.send(records)
    batches.finish((source.issues, source.lines_read, source.entries_read))


class _Stitcher:
    """The main process's side: each record in order, into the output."""

    def __init__(self, writer: _Writer, report: Report) -> None:
        self.writer = writer
        self.report = report
        self.ids: list[str] = []  # the worker's entries' ids, by their number

    def batch(self, records: list[tuple[Any, ...]], read: Any) -> None:
        writer = self.writer
        ids = self.ids
        asf_ids = writer.asf_ids
        ancestry = writer.ancestry
        nodes = ancestry.nodes
        checker = writer.checker
        write = writer.out.write
        add = ancestry.add
        append = ids.append
        for record in records:
            kind = record[0]
            if kind == "e":
                _, type_, parent, ts, digest, size, body = record
                data = read(size)
                if parent is not None:
                    parent = ids[parent] if type(parent) is int else asf_ids[parent][1]
                entry_id = envelope_id_plain(type_, parent, ts, "sha256:" + digest)
                if checker is not None and (entry_id in nodes or (parent is not None and parent not in nodes)):
                    checker.links({"type": type_, "id": entry_id, "parent": parent}, writer.written + 2, ancestry)
                write(entry_line(type_, entry_id, parent, ts, data, body))
                add(entry_id, parent)
                writer.written += 1
                append(entry_id)
            elif kind == "p":
                _, pi_id, first, last, items, editable = record
                asf_ids[pi_id] = (ids[first], ids[last])
                if items:
                    writer.item_ids[pi_id] = [ids[i] for i in items]
                if editable:
                    writer.editable.add(pi_id)
            elif kind == "d":
                _, entry, parent_state, last_ts, next_line = record
                if entry.parent_id is not None:
                    writer.state[entry.parent_id] = parent_state
                writer.last_ts = last_ts
                writer.next_line = next_line
                writer.write_entry(entry)
            else:
                self.report.add(*record[1:])


def _stitch(writer: _Writer, folder: str, notify: int, report: Report) -> tuple[Any, ...] | None:
    """Stitch the worker's batches in as they come; the reader's account of the whole
    file, or ``None`` when the worker stopped before the end."""
    stitcher = _Stitcher(writer, report)
    records_file = bodies = None
    try:
        while True:
            signal_byte = os.read(notify, 1)
            if not signal_byte:
                return None  # the worker is gone without finishing
            if records_file is None:
                records_file = open(os.path.join(folder, "records"), "rb")  # noqa: SIM115
                bodies = open(os.path.join(folder, "bodies"), "rb", buffering=1 << 20)  # noqa: SIM115
            if signal_byte == _DONE:
                return pickle.load(records_file)
            stitcher.batch(pickle.load(records_file), bodies.read)  # type: ignore[union-attr]
    finally:
        for fh in (records_file, bodies):
            if fh is not None:
                fh.close()


class Worker:
    """The forked worker, from its start (before this process writes anything) to the
    stitching of its records into the output."""

    def __init__(self, stream: Any, last_line: int, options: Mapping[str, Any]) -> None:
        self.stream = stream
        self.last_line = last_line
        self.folder = tempfile.mkdtemp(prefix="piconv-asf-")
        self.notify, notify_write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the worker: never returns
            code = 1
            try:
                os.close(self.notify)
                _worker(stream, last_line, bool(options.get("validate")), self.folder, notify_write)
                code = 0
            except BaseException:  # the main process starts over; it words any error itself
                pass
            finally:
                os._exit(code)
        os.close(notify_write)

    def join(self, entries: Iterator[ir.Entry], writer: _Writer, report: Report) -> None:
        """Write the entries up to the split line, then stitch the worker's in. Raises
        ``NeedsWholeSession`` when the worker fails, so that the caller starts over on
        the whole document."""
        from piconv.stream import NeedsWholeSession

        last_line = self.last_line
        for entry in entries:
            if entry.origin.line > last_line:
                break
            writer.write_entry(entry)
        account = _stitch(writer, self.folder, self.notify, report)
        ok = _reap(self.pid, kill=False)
        self.pid = -1
        if account is None or not ok:
            raise NeedsWholeSession(last_line + 1, "the second process could not convert the rest")
        self.stream.adopt(*account)

    def close(self) -> None:
        """Stop the worker if it still runs, and clear its files."""
        if self.pid > 0:
            _reap(self.pid, kill=True)
            self.pid = -1
        if self.notify >= 0:
            os.close(self.notify)
            self.notify = -1
        shutil.rmtree(self.folder, ignore_errors=True)


def _reap(pid: int, *, kill: bool) -> bool:
    """Wait for the worker (killing it first if ``kill``); whether it succeeded."""
    if kill:
        with contextlib.suppress(OSError):  # already gone
            os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
