"""One large ASF conversion on two processes.

Entry ids chain (each hashes its parent's id), so the file cannot simply be cut in two
and each half converted alone. What can be split is the costly part: mapping an entry,
serialising its body canonically and hashing it depend only on the entry and on a little
state (the settings in force, the call ids taken, the last timestamp), never on ids.

So a forked worker converts the second part of the file, from the line after the split,
while this process converts the first. The worker maps, serialises, hashes and checks
each entry as the one-process writer does, writing each body to a file and recording its
type, timestamp, body hash and parent (an earlier record, or a pi entry of the first
part), and hands them over in batches. This process writes the first part, then takes the
batches as they come and, in order, computes each envelope id, which needs only the
parent's id and the body hash, and writes the line.

The worker does not read the first part, so it does not know the state there. It works
with what it can know:

- Call ids: the only lines of the first part it reads are those that mention a tool call,
  to take the same call ids in the same order. This process checks that it took exactly
  those before stitching anything in.
- Settings: a setting a first-part entry leaves in force is a :class:`Pending` reference
  to that entry. Most entries never read one (an assistant message sets the model
  outright); an entry whose output would depend on one is handed over whole, and this
  process writes it with the real settings.
- The first entry of the second part, and any entry that would take its timestamp from
  one before it, are handed over too, as are entries whose bodies name other entries'
  ASF ids (compactions, branch summaries, labels, context edits).

The output is the one-process output, byte for byte; the tests hold the two to it on
every corpus file, split at many places. Anything the worker cannot do (a file that needs
the whole document, an id of the second part used in the first, other call ids, an output
that fails validation, any error) makes the conversion raise ``NeedsWholeSession`` and
start over on the whole document, in one process, which also words a validation failure
exactly.
"""

from __future__ import annotations

import contextlib
import dataclasses
import mmap
import os
import pickle
import shutil
import signal
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

import orjson
from piconv import ir
from piconv.report import Report
from piconv.stream import NeedsWholeSession

from .ids import canonical_ts, envelope_id_plain
from .jcs import c_sha256_hex, c_stitch_run, c_stitched
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

FIRST_SHARE = 0.47
"""The share of the input (in bytes) this process converts itself; the worker converts
the rest, and this process stitches it in, which costs it a little more per entry than
the worker spends on the first part's tool calls."""

Split = tuple[int, int]
"""The last line this process converts, and the byte offset of the line after it."""

# Bodies that name other entries' ASF ids, or ask whether one entry is on another's path.
_HANDED_OVER = (ir.Compaction, ir.BranchSummary, ir.Label, ir.ContextEdit)
_SETTINGS_FIELDS = tuple(f.name for f in dataclasses.fields(Settings))
_PLACEHOLDER = "sha256:" + "0" * 64  # an id of the right shape, for the schema check alone
_NO_BODY: dict[str, Any] = {}
_TOOL_CALL = b'"toolCall"'
_CHUNK = 4 * 1024 * 1024


def split_line(source: Any, share: float) -> Split | None:
    """Where to split: the line holding the byte at ``share`` of the input is the last
    this process converts (``None``: too small to split, not a file or bytes, or no line
    after that one)."""
    if isinstance(source, (bytes, bytearray)):
        size = len(source)
        if size < MIN_BYTES:
            return None
        cut = int(size * share)
        end = source.find(b"\n", cut)
        if end < 0 or end + 1 >= size:
            return None
        return source.count(b"\n", 0, cut) + 1, end + 1
    try:
        size = os.path.getsize(source)
    except (OSError, TypeError):
        return None
    if size < MIN_BYTES:
        return None
    return _split_file(source, int(size * share), size)


def _split_file(path: Any, cut: int, size: int) -> Split | None:
    lines = 1
    done = 0
    with open(path, "rb", buffering=0) as fh:
        while done < cut:
            chunk = fh.read(min(cut - done, _CHUNK))
            if not chunk:
                return None
            lines += chunk.count(b"\n")
            done += len(chunk)
        while True:  # on to the end of the line holding the byte at cut
            chunk = fh.read(1 << 16)
            if not chunk:
                return None
            end = chunk.find(b"\n")
            if end >= 0:
                offset = done + end + 1
                return (lines, offset) if offset < size else None
            done += len(chunk)


@dataclasses.dataclass(frozen=True, slots=True)
class Pending:
    """A setting the worker does not know: the ``field`` of the settings in force after
    the entry ``pi_id``, which this process wrote (first part, or handed over)."""

    pi_id: str
    field: str


def _pending(pi_id: str) -> Settings:
    return Settings(*(Pending(pi_id, name) for name in _SETTINGS_FIELDS))


def resolve(settings: Settings, states: Mapping[str, Settings]) -> Settings:
    """``settings`` with each :class:`Pending` field read from ``states``."""
    values = [getattr(settings, name) for name in _SETTINGS_FIELDS]
    if not any(type(v) is Pending for v in values):
        return settings
    return Settings(*(getattr(states[v.pi_id], v.field) if type(v) is Pending else v for v in values))


class _FirstPartStates(dict):
    """The worker's settings by pi id; an entry it has not written is of the first part,
    and its settings are pending."""

    def get(self, key: Any, default: Any = None) -> Any:
        value = dict.get(self, key)
        return _pending(key) if value is None else value


class _FirstPartIds(dict):
    """The worker's (first, last) records by pi id; an entry it has not written is of
    the first part, and stands as its pi id (this process knows its ASF id)."""

    def get(self, key: Any, default: Any = None) -> Any:
        value = dict.get(self, key)
        return (key, key) if value is None else value


class _UnknownTs(str):
    """The last timestamp before the second part, which the worker does not know."""


_UNKNOWN_TS = _UnknownTs("")


def _lines_holding(source: Any, end: int, needle: bytes) -> Iterator[bytes]:
    """Each line before byte ``end`` of ``source`` (a path or bytes) holding ``needle``."""
    if isinstance(source, (bytes, bytearray)):
        yield from _matching_lines(source, end, needle)
        return
    with open(source, "rb") as fh:
        try:
            # searched in place: no copy of the first part is made
            view: Any = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # an empty file, or one that cannot be mapped
            view = fh.read(end)
        try:
            yield from _matching_lines(view, end, needle)
        finally:
            if isinstance(view, mmap.mmap):
                view.close()


def _matching_lines(data: Any, end: int, needle: bytes) -> Iterator[bytes]:
    pos = data.find(needle, 0, end)
    while pos >= 0:
        start = data.rfind(b"\n", 0, pos) + 1
        stop = data.find(b"\n", pos, end)
        if stop < 0:
            stop = end
        yield data[start:stop]
        pos = data.find(needle, stop, end)


def first_part_calls(source: Any, end: int) -> list[str | None]:
    """The call ids of the assistant messages' tool calls before byte ``end``, in file
    order, as the entries hold them (a ``toolCall`` part's ``id`` when it is a string,
    else none): what the writer hands call ids out from. The main process checks them."""
    natives: list[str | None] = []
    for raw in _lines_holding(source, end, _TOOL_CALL):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue  # reported by this process, which reads every line of the first part
        if type(value) is not dict or value.get("type") != "message":
            continue
        message = value.get("message")
        if type(message) is not dict or message.get("role") != "assistant":
            continue
        content = message.get("content")
        if type(content) is not list:
            continue
        for part in content:
            if type(part) is dict and part.get("type") == "toolCall":
                call_id = part.get("id")
                natives.append(call_id if type(call_id) is str else None)
    return natives


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
class _DetachedWriter(_Writer):
    """Maps, serialises, hashes and checks the second part's entries as the one-process
    writer does, but records each one (its id is computed later, by the main process),
    and hands over those it cannot write without the first part's state."""

    records: list[tuple[Any, ...]] = dataclasses.field(default_factory=list)
    bodies: Any = None
    count: int = 0
    taken: list[tuple[str | None, str]] = dataclasses.field(default_factory=list)  # this entry's call ids

    def emit(self, type_: str, parent: Any, ts: str, body: dict[str, Any], line: int) -> Any:
        type_, body, data = self.serialise(type_, body, line)
        if self.checker is not None:
            shape = {"type": type_, "id": _PLACEHOLDER, "parent": None if parent is None else _PLACEHOLDER, "ts": ts, **body}
            self.checker.shape(shape, 0)
        self.bodies.write(data)
        digest = c_sha256_hex(data) if c_sha256_hex is not None else _sha256(data).hexdigest()
        # the body travels only when a member is named like an envelope member (see entry_line)
        self.records.append(("e", type_, parent, ts, digest, len(data), _NO_BODY if _ENVELOPE.isdisjoint(body) else body))
        number = self.count
        self.count += 1
        return number

    def call_id(self, native: str | None, line: int) -> str:
        candidate = super().call_id(native, line)
        self.taken.append((native, candidate))
        return candidate

    def write_entry(self, entry: ir.Entry) -> None:
        parent_id = entry.parent_id
        parent_state = self.state.get(parent_id) if parent_id else _NO_SETTINGS
        if type(entry.body) in _HANDED_OVER or self.needs_first_part(entry, parent_state):
            self.hand_over(entry, parent_state)
            return
        super().write_entry(entry)
        first, last = self.asf_ids[entry.id]
        calls = tuple(self.taken) if self.taken else None
        self.taken.clear()
        self.records.append(("p", entry.id, first, last, self.item_ids.get(entry.id), entry.id in self.editable, calls))

    def needs_first_part(self, entry: ir.Entry, parent_state: Settings) -> bool:
        """Whether the entry's output depends on the state of the first part."""
        if self.next_line < 0:  # the first entry: whether lines before it were skipped
            return True
        if self.last_ts is _UNKNOWN_TS and (entry.timestamp is None or canonical_ts(entry.timestamp) is None):
            return True  # it may take the last timestamp before it
        body = entry.body
        if type(body) is ir.MessageBody:
            message = body.message
            if type(message) is ir.AssistantMessage:  # compared with the model in force
                return message.model is not None and (type(parent_state.model) is Pending or type(parent_state.provider) is Pending)
            if type(message) is ir.SystemMessage:  # added to the instructions and tools in force
                return any(type(v) is Pending for v in (parent_state.content, parent_state.sections, parent_state.tools))
        return False

    def hand_over(self, entry: ir.Entry, parent_state: Settings) -> None:
        """Record the entry whole, for the main process to write, and keep what the
        one-process writer would after it: call ids, timestamp, next line, settings."""
        self.records.append(("d", entry, parent_state, self.last_ts, self.next_line))
        report, self.report = self.report, _Discard(format="asf")  # the main process reports it
        try:
            if self.last_ts is not _UNKNOWN_TS or (entry.timestamp is not None and canonical_ts(entry.timestamp) is not None):
                self.ts_of(entry, {})
            body = entry.body
            message = body.message if type(body) is ir.MessageBody else None
            if type(message) is ir.AssistantMessage:
                if type(message.content) is not str:
                    for part in message.content or ():
                        if type(part) is ir.ToolCall:
                            self.call_id(part.call_id, entry.origin.line)
                state = assistant_settings(parent_state, message.model)
            elif type(message) is ir.SystemMessage:
                state = Settings(parent_state.model, parent_state.provider, parent_state.effort, parent_state.level,
                                 *(Pending(entry.id, name) for name in ("content", "sections", "tools")))  # type: ignore[arg-type]
            elif type(body) in (ir.ModelChange, ir.ReasoningLevelChange):
                state = self.map_body(entry, parent_state, {}, None)[1]
            else:
                state = parent_state
        finally:
            self.report = report
        self.taken.clear()
        self.next_line = entry.origin.line + 1
        self.asf_ids[entry.id] = (entry.id, entry.id)
        self.state[entry.id] = state


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
        self.sent = 0  # bytes of bodies in the batches sent so far

    def send(self, records: list[tuple[Any, ...]]) -> None:
        self.bodies.flush()
        end = self.bodies.tell()
        pickle.dump((records, end - self.sent), self.records_file, protocol=pickle.HIGHEST_PROTOCOL)
        self.sent = end
        self.records_file.flush()
        os.write(self.notify, _BATCH_READY)
        records.clear()

    def finish(self, account: tuple[Any, ...]) -> None:
        self.bodies.close()
        pickle.dump(account, self.records_file, protocol=pickle.HIGHEST_PROTOCOL)
        self.records_file.close()
        os.write(self.notify, _DONE)


def _worker(stream: Any, split: Split, validate: bool, folder: str, notify: int) -> None:
    """The forked worker: the first part's call ids, then the records of the rest."""
    last_line, offset = split
    records: list[tuple[Any, ...]] = []
    checker = None
    if validate:
        from .validate import WriteChecker

        checker = WriteChecker(None)
    batches = _Batches(folder, notify)
    writer = _DetachedWriter(out=None, report=_Discard(format="asf"), checker=checker, records=records, bodies=batches.bodies,
                             state=_FirstPartStates(), asf_ids=_FirstPartIds(), last_ts=_UNKNOWN_TS, next_line=-1)
    for native in first_part_calls(stream.source, offset):
        writer.call_id(native, 0)
    writer.taken.clear()
    writer.report = _Recorder(records)
    if checker is not None:
        checker.call_ids = set(writer.call_ids)  # each call id handed out went into an item
    records.append(("s", frozenset(writer.call_ids), dict(writer.call_map)))
    rest = stream.tail(offset, last_line + 1)
    write = writer.write_entry
    for entry in rest:
        write(entry)
        if len(records) >= BATCH:
            batches.send(records)
    if records:
        batches.send(records)
    batches.finish((rest.issues, rest.lines_read, rest.entries_read))


class _Stitcher:
    """The main process's side: each record in order, into the output."""

    def __init__(self, writer: _Writer, report: Report) -> None:
        self.writer = writer
        self.report = report
        self.ids: list[str] = []  # the worker's entries' ids, by their number

    def batch(self, records: list[tuple[Any, ...]], blob: bytes) -> None:
        """Stitch in one batch of records, whose bodies are ``blob``, in order."""
        writer = self.writer
        ids = self.ids
        asf_ids = writer.asf_ids
        ancestry = writer.ancestry
        nodes = ancestry.nodes
        checker = writer.checker
        write = writer.out.write
        stitched = c_stitched
        run = c_stitch_run
        check = checker is not None
        offset = 0
        index = 0
        end = len(records)
        tables = (asf_ids, writer.item_ids, writer.editable, writer.call_ids, writer.call_map,
                  checker.call_ids if checker is not None else None)
        reports: list[tuple[Any, ...]] = []
        while index < end:
            if run is not None:  # in C, as far as a record it leaves to the code below
                index, offset, text, count = run(records, index, blob, offset, ids, nodes, check, *tables, reports)
                if count:
                    write(text)
                    writer.written += count
                for report in reports:
                    self.report.add(*report[1:])
                reports.clear()
                if index >= end:
                    break
            record = records[index]
            index += 1
            kind = record[0]
            if kind == "e":
                _, type_, parent, ts, digest, size, body = record
                data = blob[offset : offset + size]
                offset += size
                if parent is not None:
                    parent = ids[parent] if type(parent) is int else self.first_part_id(parent)
                made = stitched(type_, parent, ts, digest, data) if stitched is not None and not body else None
                if made is not None:
                    entry_id, text = made
                else:
                    entry_id = envelope_id_plain(type_, parent, ts, "sha256:" + digest)
                    text = entry_line(type_, entry_id, parent, ts, data, body)
                if checker is not None and (entry_id in nodes or (parent is not None and parent not in nodes)):
                    checker.links({"type": type_, "id": entry_id, "parent": parent}, writer.written + 2, ancestry)
                write(text)
                ancestry.add(entry_id, parent)
                writer.written += 1
                ids.append(entry_id)
            elif kind == "p":
                _, pi_id, first, last, items, editable, calls = record
                if pi_id in asf_ids:
                    raise NeedsWholeSession(0, f"id {pi_id!r} is used again")
                asf_ids[pi_id] = (ids[first], ids[last])
                if items:
                    writer.item_ids[pi_id] = [ids[i] for i in items]
                if editable:
                    writer.editable.add(pi_id)
                if calls:
                    self.take(calls)
            elif kind == "d":
                self.write_handed_over(*record[1:])
            elif kind == "s":
                _, call_ids, call_map = record
                if call_ids != writer.call_ids or call_map != writer.call_map:
                    raise NeedsWholeSession(0, "the second process took other call ids")
            else:
                self.report.add(*record[1:])

    def first_part_id(self, pi_id: str) -> str:
        pair = self.writer.asf_ids.get(pi_id)
        if pair is None:
            raise NeedsWholeSession(0, f"parent {pi_id!r} is not an earlier entry")
        return pair[1]

    def take(self, calls: tuple[tuple[str | None, str], ...]) -> None:
        """The call ids the worker took for one entry, as the writer takes them."""
        writer = self.writer
        checker_ids = writer.checker.call_ids if writer.checker is not None else None
        for native, candidate in calls:
            writer.call_ids.add(candidate)
            if native is not None:
                writer.call_map[native] = candidate
            if checker_ids is not None:
                checker_ids.add(candidate)

    def write_handed_over(self, entry: ir.Entry, parent_state: Settings, last_ts: str, next_line: int) -> None:
        writer = self.writer
        if entry.id in writer.asf_ids:
            raise NeedsWholeSession(entry.origin.line, f"id {entry.id!r} is used again")
        parent_id = entry.parent_id
        if parent_id is not None:
            if parent_id not in writer.asf_ids:
                raise NeedsWholeSession(entry.origin.line, f"parent {parent_id!r} is not an earlier entry")
            if parent_id not in writer.state:  # one the worker wrote
                writer.state[parent_id] = resolve(parent_state, writer.state)
        if type(last_ts) is not _UnknownTs:  # else: every entry since the split was written here
            writer.last_ts = last_ts
        if next_line >= 0:
            writer.next_line = next_line
        writer.write_entry(entry)


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
            records, size = pickle.load(records_file)
            stitcher.batch(records, bodies.read(size))  # type: ignore[union-attr]
    finally:
        for fh in (records_file, bodies):
            if fh is not None:
                fh.close()


class Worker:
    """The forked worker, from its start (before this process writes anything) to the
    stitching of its records into the output."""

    def __init__(self, stream: Any, split: Split, options: Mapping[str, Any]) -> None:
        self.stream = stream
        self.last_line = split[0]
        self.folder = tempfile.mkdtemp(prefix="piconv-asf-")
        self.notify, notify_write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the worker: never returns
            code = 1
            try:
                os.close(self.notify)
                _worker(stream, split, bool(options.get("validate")), self.folder, notify_write)
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
        last_line = self.last_line
        stream = self.stream
        beyond = 0  # entries read past the split (the worker's)
        for entry in entries:
            if entry.origin.line > last_line:
                beyond = 1
                break
            writer.write_entry(entry)
        first_entries = stream.entries_read - beyond
        first_issues = [issue for issue in stream.issues if issue.line <= last_line]
        account = _stitch(writer, self.folder, self.notify, report)
        ok = _reap(self.pid, kill=False)
        self.pid = -1
        if account is None or not ok:
            raise NeedsWholeSession(last_line + 1, "the second process could not convert the rest")
        issues, lines_read, entries_read = account
        if any(issue.code == "crlf" for issue in first_issues):  # reported at its first line only
            issues = [issue for issue in issues if issue.code != "crlf"]
        stream.adopt(tuple(sorted((*first_issues, *issues), key=lambda i: i.line)), lines_read, first_entries + entries_read)

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
