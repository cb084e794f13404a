"""pi's session semantics: header, migrations v1 → v2 → v3, the id/parentId tree, the leaf.

This follows pi 1.6.0's ``SessionManager`` (``session-manager.js``) step for step, in
memory only: the input is never rewritten. Where pi loses data or hangs (no header, a
parent cycle), piconv keeps going, repairs the tree and reports a problem; those choices
are documented in ``docs/formats/pi.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from ..ir import Document, Entry, Issue, SessionInfo
from ..problems import Problem
from ..records import replace
from .context import build_context
from .entries import load_entry

CURRENT_VERSION = 3


class SourceRecord(Protocol):
    """One parsed line: what :mod:`piconv.jsonl` yields."""

    line: int
    value: dict[str, Any]


def js_number(value: Any) -> float:
    """JavaScript's ``ToNumber`` for the values a header ``version`` can hold."""
    if value is None:
        return 0.0
    if value is True or value is False:
        return float(value)
    if type(value) is int or type(value) is float:
        return float(value)
    if type(value) is str:
        text = value.strip()
        if not text:
            return 0.0
        try:
            return float(int(text, 0)) if text[:2].lower() in ("0x", "0o", "0b") else float(text)
        except ValueError:
            return math.nan
    return math.nan


def synthetic_id(n: int) -> str:
    """The id pi gives the n-th entry of a version 1 file when its random source is
    replaced by a counter (the oracle's ``--deterministic-ids``): ``00000001``, ..."""
    return f"{n:08x}"


class _Builder:
    def __init__(self, source_path: str | None) -> None:
        self.source_path = source_path
        self.issues: list[Issue] = []

    def problem(self, line: int, code: str, message: str) -> None:
        self.issues.append(Issue(line, code, message))

    # -- header --------------------------------------------------------------------
    def check_header(self, line: int, value: dict[str, Any]) -> None:
        if type(value.get("id")) is not str:
            self.problem(line, "header-without-id", "the session header has no string id (pi refuses it)")

    def find_header(self, records: Sequence[SourceRecord]) -> tuple[int, dict[str, Any]] | None:
        header = None
        for index, rec in enumerate(records):
            line, value = rec.line, rec.value
            if value.get("type") == "session":
                header = (line, value)
                if index > 0:
                    self.problem(
                        line,
                        "late-header",
                        f"the session header is on line {line}, after {index} entries "
                        "(pi refuses such a file; piconv reads it)",
                    )
                else:
                    self.check_header(line, value)
                break
        if header is None:
            self.problem(
                records[0].line if records else 0,
                "missing-header",
                'no session header line (type "session"); pi refuses such a file, piconv reads the entries',
            )
        return header

    # -- migrations ----------------------------------------------------------------
    def migrate_v1(self, records: Sequence[SourceRecord]) -> dict[int, tuple[str, str | None, dict]]:
        """Ids, parents and compaction targets for a version 1 file, by record index:
        ``{index: (id, parentId, changes)}`` where ``changes`` are migrated members."""
        result: dict[int, tuple[str, str | None, dict]] = {}
        prev: str | None = None
        counter = 0
        for index, rec in enumerate(records):
            value = rec.value
            if value.get("type") == "session":
                continue
            counter += 1
            entry_id = synthetic_id(counter)
            changes: dict[str, Any] = {}
            if value.get("type") == "compaction":
                target_index = value.get("firstKeptEntryIndex")
                if type(target_index) in (int, float) and type(target_index) is not bool:
                    changes["-firstKeptEntryIndex"] = True
                    if float(target_index).is_integer() and 0 <= target_index < len(records):
                        target = records[int(target_index)].value
                        if target.get("type") != "session":
                            if int(target_index) <= index:
                                # already migrated (itself included): its new id
                                new_id = (
                                    entry_id if int(target_index) == index else result[int(target_index)][0]
                                )
                                changes["firstKeptEntryId"] = new_id
                            else:
                                # pi reads the target's id before migrating it: usually none
                                changes["firstKeptEntryId"] = target.get("id", ...)
            result[index] = (entry_id, prev, changes)
            prev = entry_id
        return result

    # -- entries -------------------------------------------------------------------
    def start(self, header_rec: tuple[int, dict[str, Any]] | None, migrated_v1: dict) -> None:
        self.header_rec = header_rec
        self.migrated_v1 = migrated_v1
        self.other_headers: list[tuple[int, Any]] = []
        self.entries: list[Entry] = []
        self.seen: dict[str, int] = {}  # id -> position in entries (the latest holder)
        self.taken: set[str] = set()
        self.unresolved: list[int] = []  # positions of entries whose parent was not seen before them

    def add(self, index: int, line: int, raw: dict[str, Any]) -> None:
        """One record, in file order."""
        if raw.get("type") == "session":
            if self.header_rec is not None and raw is self.header_rec[1]:
                return
            self.other_headers.append((line, raw))
            self.problem(line, "extra-header", "a further session header line: kept, not part of the tree")
            return
        # entry(), inlined for the usual, well-formed entry (a call less per line)
        entry_id = raw.get("id")
        parent_id = raw.get("parentId", ...)
        if not self.migrated_v1 and type(entry_id) is str and (parent_id is None or type(parent_id) is str):
            entry = load_entry(raw, line, entry_id, parent_id)
        else:
            entry = self.irregular_entry(index, line, raw, self.migrated_v1, self.taken)
            entry_id, parent_id = entry.id, entry.parent_id
        entries = self.entries
        seen = self.seen
        previous = seen.get(entry_id)
        if previous is not None:
            self.rename_earlier(previous, entry_id, line)
        if parent_id is not None and parent_id not in seen:
            self.unresolved.append(len(entries))  # dangling, or a parent further on
        seen[entry_id] = len(entries)
        entries.append(entry)

    def entry(self, index: int, line: int, raw: dict[str, Any]) -> Entry:
        """The entry of one record that is not a header (migrated or repaired if need be)."""
        entry_id = raw.get("id")
        parent_id = raw.get("parentId", ...)
        if not self.migrated_v1 and type(entry_id) is str and (parent_id is None or type(parent_id) is str):
            return load_entry(raw, line, entry_id, parent_id)  # the usual, well-formed entry
        return self.irregular_entry(index, line, raw, self.migrated_v1, self.taken)

    def rename_earlier(self, previous: int, entry_id: str, line: int) -> None:
        old = self.entries[previous]
        renamed = f"{entry_id}~{old.origin.line}"
        while renamed in self.taken or renamed in self.seen:
            renamed += "~"
        self.entries[previous] = replace(
            old,
            id=renamed,
            origin=replace(old.origin, synthesized=old.origin.synthesized | {"id"}),
            extra={**old.extra, "id": entry_id} if "id" not in old.origin.synthesized else old.extra,
        )
        self.taken.add(renamed)
        self.problem(
            old.origin.line,
            "duplicate-id",
            f"id {entry_id!r} is used again on line {line}; the later entry wins (as in pi), "
            f"this one is kept as {renamed!r}",
        )

    def finish(self, version: float, raw_version: Any, lines_read: int) -> Document:
        # Without renamed or invented ids, ``seen`` is every entry's position and only the
        # entries whose parent did not come before them need a look.
        entries = self.repair_parents(self.entries, None if self.taken else self.unresolved)
        session = self.session_info(self.header_rec, version, raw_version, self.other_headers)
        return Document(
            session=session,
            entries=tuple(entries),
            leaf_id=entries[-1].id if entries else None,
            issues=tuple(sorted(self.issues, key=lambda i: i.line)),
            lines_read=lines_read,
            context_builder=build_context,
        )

    def build(
        self, records: Sequence[SourceRecord], lines_read: int, title: Sequence[tuple[int, Any]] = ()
    ) -> Document:
        """A document from all records at once (any version, header anywhere or nowhere).
        ``title``: Oh-My-Pi's title line before the header, kept beside it."""
        header_rec = self.find_header(records)
        header = header_rec[1] if header_rec else {}
        raw_version = header.get("version", None)
        if header_rec is None:
            # pi refuses a file without a header; piconv guesses its version from the entries.
            version = 3.0 if any(type(r.value.get("id")) is str for r in records) else 1.0
        else:
            version = 1.0 if raw_version is None else js_number(raw_version)
        self.start(header_rec, self.migrate_v1(records) if version < 2 else {})
        self.other_headers.extend(title)
        for index, rec in enumerate(records):
            self.add(index, rec.line, rec.value)
        return self.finish(version, raw_version, lines_read)

    def irregular_entry(
        self,
        index: int,
        line: int,
        raw: dict[str, Any],
        migrated_v1: dict[int, tuple[str, str | None, dict]],
        taken: set[str],
    ) -> Entry:
        """An entry that needs migration or repair: version 1 ids, a missing id, a parent
        that is not a string or is missing."""
        synthesized: set[str] = set()
        overrides: dict[str, Any] = {}
        value = raw
        if index in migrated_v1:
            entry_id, parent_id, changes = migrated_v1[index]
            value = dict(raw)
            for key, new in (("id", entry_id), ("parentId", parent_id)):
                if key in raw:
                    overrides[key] = raw[key]
                synthesized.add(key)
                value[key] = new
            if changes.pop("-firstKeptEntryIndex", False):
                overrides["firstKeptEntryIndex"] = value.pop("firstKeptEntryIndex")
                if "firstKeptEntryId" in changes:
                    if "firstKeptEntryId" in raw:
                        overrides["firstKeptEntryId"] = raw["firstKeptEntryId"]
                    synthesized.add("firstKeptEntryId")
                    new_first = changes["firstKeptEntryId"]
                    if new_first is ...:
                        value.pop("firstKeptEntryId", None)
                    else:
                        value["firstKeptEntryId"] = new_first
        else:
            entry_id = raw.get("id")
            parent_id = raw.get("parentId")
            if type(entry_id) is not str:
                if "id" in raw:
                    overrides["id"] = entry_id
                synthesized.add("id")
                entry_id = f"~{line}"
                while entry_id in taken or entry_id in self.seen:
                    entry_id += "~"
                taken.add(entry_id)
                self.problem(line, "missing-id", f"entry has no string id; piconv names it {entry_id!r}")
            if parent_id is not None and type(parent_id) is not str:
                overrides["parentId"] = parent_id
                synthesized.add("parentId")
                self.problem(
                    line, "bad-parent", f"parentId {parent_id!r} is not a string; the entry becomes a root"
                )
                parent_id = None
            elif "parentId" not in raw:
                synthesized.add("parentId")
        return load_entry(value, line, entry_id, parent_id, frozenset(synthesized), overrides)

    def repair_parents(self, entries: list[Entry], unresolved: list[int] | None = None) -> list[Entry]:
        """Detaches entries whose parent does not exist and cuts parent cycles.
        ``unresolved``: the positions of the only entries whose parent may not precede
        them (see :meth:`add`), when ``seen`` holds every entry's position; ``None``:
        look at every entry."""
        ids = {e.id: i for i, e in enumerate(entries)} if unresolved is None else self.seen

        def detach(i: int, code: str, message: str) -> None:
            e = entries[i]
            extra = dict(e.extra)
            if "parentId" not in e.origin.synthesized:
                extra["parentId"] = e.parent_id
            entries[i] = replace(
                e,
                parent_id=None,
                origin=replace(e.origin, synthesized=e.origin.synthesized | {"parentId"}),
                extra=extra,
            )
            self.problem(e.origin.line, code, message)

        forward = False  # does any entry name a parent that comes later in the file?
        for i in range(len(entries)) if unresolved is None else unresolved:
            e = entries[i]
            parent = e.parent_id
            if parent is not None:
                at = ids.get(parent)
                if at is None:
                    detach(
                        i,
                        "dangling-parent",
                        f"parent {parent!r} does not exist; the entry becomes a root (as in pi)",
                    )
                elif at >= i:
                    forward = True
        if not forward:
            return entries  # every parent precedes its children: no cycle is possible

        # Parent cycles: pi walks parent links forever. Follow each chain once; on meeting
        # the chain being walked, cut the cycle at its member that comes first in the file.
        state = [0] * len(entries)  # 0 unseen, 1 on the current chain, 2 done
        for start in range(len(entries)):
            chain: list[int] = []
            i: int | None = start
            while i is not None and state[i] == 0:
                state[i] = 1
                chain.append(i)
                parent = entries[i].parent_id
                i = ids[parent] if parent is not None else None
            if i is not None and state[i] == 1:
                cycle = chain[chain.index(i) :]
                cut = min(cycle)
                members = ", ".join(repr(entries[c].id) for c in sorted(cycle))
                detach(
                    cut,
                    "parent-cycle",
                    f"parent links form a cycle ({members}); cut here, the entry becomes a root",
                )
            for c in chain:
                state[c] = 2
        return entries

    def session_info(
        self,
        header_rec: tuple[int, dict[str, Any]] | None,
        version: float,
        raw_version: Any,
        other_headers: list[tuple[int, Any]],
    ) -> SessionInfo:
        header = header_rec[1] if header_rec else {}
        known = {"type", "id", "timestamp", "cwd", "parentSession", "version"}
        extra = {k: v for k, v in header.items() if k not in known}
        fields: dict[str, Any] = {}
        for key, name in (
            ("id", "id"),
            ("timestamp", "created"),
            ("cwd", "cwd"),
            ("parentSession", "parent_session"),
        ):
            value = header.get(key)
            if type(value) is str:
                fields[name] = value
            elif key in header:
                extra[key] = value
        if "version" in header and (type(raw_version) is not int or raw_version == 1):
            # an explicit null too: kept, as every null is; and an explicit 1, which the
            # typed field cannot tell from a version 1 file's missing member
            extra["version"] = raw_version
        if header_rec is None:
            source_version = int(version)
        else:
            source_version = (
                raw_version if type(raw_version) is int else (1 if "version" not in header else None)
            )
        return SessionInfo(
            **fields,
            source_format="pi",
            source_version=source_version,
            source_path=self.source_path,
            line=header_rec[0] if header_rec else 0,
            other_headers=tuple(other_headers),
            extra=extra,
        )


def stream_document(
    items: Iterable[Any], source_path: str | None = None, problems: list[Any] | None = None
) -> Document:
    """A document straight from the reader's items (records and problems, in file order).

    A file that opens with a header of version 2 or later (every file pi writes today) is
    built as it is read, so each parsed line can be freed as soon as its entry exists:
    peak memory is the IR, not the IR plus every parsed line. Other files (version 1,
    missing or late headers) need the whole file first and take :meth:`_Builder.build`.
    """
    builder = _Builder(source_path)
    problems = [] if problems is None else problems  # the reader's problems, for the caller
    buffered: list[Any] = []
    title: list[tuple[int, Any]] = []  # Oh-My-Pi's title line, when the file opens with one
    streaming = False
    version, raw_version = 0.0, None
    index = 0
    lines_read = 0
    add = builder.add
    for item in items:
        lines_read = item.line
        if type(item) is Problem:
            builder.problem(item.line, item.code, item.message)
            problems.append(item)
            continue
        if streaming:
            index += 1
            add(index, item.line, item.value)
        elif not buffered and not title and is_title_line(item.value):
            title.append((item.line, item.value))
        elif not buffered and item.value.get("type") == "session":
            raw_version = item.value.get("version")
            version = 1.0 if raw_version is None else js_number(raw_version)
            if version >= 2:
                streaming = True
                builder.check_header(item.line, item.value)
                builder.start((item.line, item.value), {})
                builder.other_headers.extend(title)
                continue
            buffered.append(item)
        else:
            buffered.append(item)
    if streaming:
        return builder.finish(version, raw_version, lines_read)
    if title and (not buffered or buffered[0].value.get("type") != "session"):
        buffered.insert(0, _Record(*title.pop()))  # no header after it: an ordinary line
    if not buffered:
        raise NotASession(lines_read)
    if buffered[0].value.get("type") != "session" and not any(looks_like_pi(r.value) for r in buffered):
        raise NotASession(lines_read)
    return builder.build(buffered, lines_read, title)


class _Record:
    """A parsed line put back among the records (Oh-My-Pi's title line with no header after it)."""

    __slots__ = ("line", "value")

    def __init__(self, line: int, value: dict[str, Any]) -> None:
        self.line = line
        self.value = value


def is_title_line(value: Any) -> bool:
    """Oh-My-Pi's title line: ``{"type": "title", "title": "...", ...}`` (padded to a fixed
    size, rewritten in place), written before the session header. Kept beside the header
    (``SessionInfo.other_headers``), never an entry of the tree."""
    return type(value) is dict and value.get("type") == "title" and type(value.get("title", "")) is str


class NotASession(Exception):
    """No header and nothing that looks like a pi entry."""

    def __init__(self, lines_read: int) -> None:
        super().__init__(lines_read)
        self.lines_read = lines_read


def looks_like_pi(value: Any) -> bool:
    """Whether a parsed line is one a pi reader takes for a header or an entry."""
    if type(value) is not dict:
        return False
    kind = value.get("type")
    return kind == "session" or (
        type(kind) is str and ("id" in value or "parentId" in value or "message" in value)
    )
