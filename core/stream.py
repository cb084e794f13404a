"""A session read entry by entry, for converters that write as entries arrive.

:func:`piconv.load` keeps every entry of a session in memory, because a reader of the tree
may look anywhere in it. A format whose output follows the file (ASF writes each entry
below its parent, in file order) needs only the entry at hand and a little of what came
before, so its peak memory can stay near the size of one line rather than the whole IR.

An entry streamed here is exactly the entry :func:`piconv.load` would build, as long as
the file is *regular*: it opens with a header of version 2 or later, every parent comes
before its children, no id is used twice and no further header line follows. That is
every file pi writes. When a file turns out otherwise, iteration raises
:class:`NeedsWholeSession` at the line that showed it, before yielding anything that
would differ, and the caller converts the whole document instead (``piconv.convert``
does this by itself).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

from .ir import Entry, Issue, SessionInfo
from .problems import Problem
from .reader import iter_lines
from .session import _Builder, js_number


class NeedsWholeSession(Exception):
    """This session cannot be read entry by entry; ``line`` and ``reason`` say why."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


class SessionStream:
    """The header of a session, then its entries one at a time (iterate once).

    ``session`` is known on opening. ``issues`` (the problems met, by line, as in
    :attr:`piconv.ir.Document.issues`), ``lines_read`` and ``entries_read`` are complete
    once iteration has ended.
    """

    def __init__(
        self, source: str | bytes | BinaryIO, source_path: str | None = None, *, recover_glued: bool = False
    ) -> None:
        self.source = source
        self.source_path = source_path
        self.recover_glued = recover_glued
        self._items = iter_lines(source, recover_glued=recover_glued)
        self._builder = _Builder(source_path)
        self.lines_read = 0
        self.entries_read = 0
        self.session = self._open()

    def _open(self) -> SessionInfo:
        builder = self._builder
        for item in self._items:
            self.lines_read = item.line
            if type(item) is Problem:
                builder.problem(item.line, item.code, item.message)
                continue
            value = item.value
            raw_version = value.get("version") if value.get("type") == "session" else None
            if value.get("type") != "session" or js_number(raw_version) < 2:
                raise NeedsWholeSession(
                    item.line, "the file does not open with a header of version 2 or later"
                )
            builder.check_header(item.line, value)
            builder.start((item.line, value), {})
            return builder.session_info((item.line, value), js_number(raw_version), raw_version, [])
        raise NeedsWholeSession(self.lines_read, "no session header")

    def __iter__(self) -> Iterator[Entry]:
        builder = self._builder
        seen = builder.seen
        problem = builder.problem
        make = builder.entry
        index = 0
        for item in self._items:
            line = item.line
            self.lines_read = line
            if type(item) is Problem:
                problem(line, item.code, item.message)
                continue
            raw: dict[str, Any] = item.value
            index += 1
            if raw.get("type") == "session":
                raise NeedsWholeSession(line, "a further session header line")
            entry = make(index, line, raw)
            entry_id = entry.id
            if entry_id in seen:
                raise NeedsWholeSession(line, f"id {entry_id!r} is used again")
            parent = entry.parent_id
            if parent is not None and parent not in seen:
                raise NeedsWholeSession(line, f"parent {parent!r} is not an earlier entry")
            seen[entry_id] = 0  # only membership counts here: no position object per entry
            self.entries_read += 1
            yield entry

    @property
    def issues(self) -> tuple[Issue, ...]:
        return tuple(sorted(self._builder.issues, key=lambda i: i.line))
