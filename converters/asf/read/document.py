"""The ``asf`` reader: an ``agentsession/0.5`` to ``0.11`` file into the IR.

Every line is read by the one JSONL line reader (``lines.py`` over ``piconv.jsonl``) and
undone from I-JSON normalisation (``unnormalise.py``); the header's version is gated as
RFC 0001 says (``version.py``); ids and parents are checked as they are read: an entry
with no id, or an id the file already used, is reported with its line and skipped; a
parent that is not an earlier entry is reported and the entry kept as a root.

Entries piconv wrote from a pi session (a chain of ASF entries sharing a ``legacy_id``,
the last carrying a ``pi`` record) are read back into the very IR entry they were
written from (``pi_group.py``), so pi → ASF → pi gives back every entry's JSON value. A
chain whose ``pi`` record is not what piconv writes is reported (``bad-pi-record``) and
its entries are read as any writer's (``foreign.py``), as is every other entry. IR ids
are unique (a ``legacy_id`` another entry already holds is renamed, ``duplicate-id``),
and every parent is an entry made before its child, so the tree has no cycle whatever
the file says. The context at a leaf is RFC 0001's (``context.py``), except for a file
whose every entry came from pi: the harness's own rule (the ``pi`` reader's) gives what
pi sent, and the RFC's agrees with it turn by turn (``tests/test_asf_read.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import IO, Any

from piconv import ir
from piconv.errors import InputError
from piconv.ir import replace

from ..lines import iter_lines
from . import foreign
from .context import AsfFile, resume_leaf
from .pi_group import Group, groups, is_pi, pi_entry, pi_session
from .rule import AsfContext
from .unnormalise import restore
from .verify import problem
from .version import gate

JSONDict = dict[str, Any]

# --------------------------------------------------------------------------- lines


class _File:
    """What reading the lines found besides the entries: the header, the lines read."""

    __slots__ = ("enveloped", "header", "lines_read")

    def __init__(self) -> None:
        self.header: JSONDict | None = None
        self.lines_read = 0
        self.enveloped = False  # has any line an ASF entry's envelope (``parent`` and ``ts``)?


def _entries(
    stream: IO[bytes], file: _File, issues: list[ir.Issue], bad_parents: dict[str, Any]
) -> Iterator[tuple[int, JSONDict]]:
    """The entries that pass the id checks, with their line numbers, as they are read
    (the header is in ``file`` before the first); every problem is added to ``issues``,
    and the parent of an entry whose parent is no earlier entry to ``bad_parents`` (the
    entry's own ``parent`` is then ``None``). :class:`InputError` for input that is no
    ASF file, or of a version not read."""
    seen: set[str] = set()
    lineno = 0
    for line in iter_lines(stream):
        lineno, value = line.line, line.value
        file.lines_read = lineno
        if value is None:
            issues.append(ir.Issue(lineno, line.code or "unreadable", f"{line.message}; skipped"))
            continue
        if value.get("type") == "session":
            if lineno == 1:
                fmt = value.get("format")
                if type(fmt) is not str or not fmt.startswith("agentsession/"):
                    raise InputError(
                        f"not an ASF file: line 1 is a session header whose format {_shown(fmt)} names no "
                        "agentsession/ version (a pi session? read it with --from pi)"
                    )
                gate(fmt)
                file.header = restore(value, issues, 1)
            else:
                issues.append(ir.Issue(lineno, "extra-header", "a session header after line 1; skipped"))
            continue
        if lineno == 1:
            issues.append(ir.Issue(1, "no-header", 'line 1 is no ASF session header (type "session")'))
        file.enveloped = file.enveloped or ("parent" in value and "ts" in value)
        entry_id = value.get("id")
        if type(entry_id) is not str or not entry_id:
            issues.append(
                ir.Issue(lineno, "bad-id", f"entry id {_shown(entry_id)} is not a non-empty string; skipped")
            )
            continue
        if entry_id in seen:
            issues.append(
                ir.Issue(lineno, "duplicate-id", f"entry id {entry_id!r} is used by an earlier line; skipped")
            )
            continue
        parent = value.get("parent")
        if parent is not None and (type(parent) is not str or parent not in seen):
            why = "names no earlier entry" if type(parent) is str else "is neither a string nor null"
            issues.append(
                ir.Issue(lineno, "bad-parent", f"parent {_shown(parent)} {why}; the entry is read as a root")
            )
            value["parent"] = None  # what the tree and the context walk see
            bad_parents[entry_id] = parent  # kept in the entry's extra
        seen.add(entry_id)
        yield lineno, restore(value, issues, lineno)
    if lineno == 0:
        raise InputError("empty file: not an ASF file")
    if file.header is None and not file.enveloped:
        raise InputError(
            "not an ASF file: no agentsession/ header and no line with an ASF entry's parent and ts"
        )


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --------------------------------------------------------------------------- ids


class _Ids:
    """IR ids, unique whatever the file repeats: ``want`` gives the id asked for, or that
    id with ``~<line>`` (and more ``~``) when another entry already holds it."""

    def __init__(self, issues: list[ir.Issue]) -> None:
        self.taken: set[str] = set()
        self.issues = issues

    def want(self, wanted: str, line: int, *, report: bool = True) -> str:
        if wanted not in self.taken:
            self.taken.add(wanted)
            return wanted
        made = f"{wanted}~{line}"
        while made in self.taken:
            made += "~"
        self.taken.add(made)
        if report:
            self.issues.append(
                ir.Issue(
                    line, "duplicate-id", f"id {wanted!r} is held by an earlier entry; this one is {made!r}"
                )
            )
        return made


def _session(header: JSONDict | None, source_path: str | None) -> ir.SessionInfo:
    if header is None:
        return ir.SessionInfo(source_format="asf", source_path=source_path)
    modelled = {"type", "id", "created_at", "cwd", "parent_session"}
    found = gate(header.get("format"))
    return ir.SessionInfo(
        id=foreign._str(header.get("id")),
        created=foreign._str(header.get("created_at")),
        cwd=foreign._str(header.get("cwd")),
        parent_session=foreign._str(header.get("parent_session")),
        source_format="asf",
        source_version=found[1],
        source_path=source_path,
        line=1,
        extra={k: v for k, v in header.items() if k not in modelled} or ir.EMPTY,
    )


# --------------------------------------------------------------------------- the document


class _Reading:
    """One file's entries on their way into the IR, chain by chain as they are read.

    While every chain is one piconv wrote from pi (and pi's rule is at hand), each is read
    into its IR entry as soon as it ends and let go (``stream``): a file piconv wrote is
    never held whole beside its document. From the first entry another writer made, the
    rest is held and read at the end (``finish``): a response's model names the items
    before it, and RFC 0001's context walks the entries."""

    def __init__(self, issues: list[ir.Issue], lines: ir.SourceLines | None, bad_parents: Mapping[str, Any]):
        self.issues = issues
        self.lines = lines
        self.bad_parents = bad_parents
        self.ids = _Ids(issues)
        self.ir_id: dict[str, str] = {}  # ASF id -> the IR id of the entry it belongs to
        self.held: list[tuple[Group, bool]] | None = None  # None: reading chain by chain
        self.raw: list[tuple[int, JSONDict]] = []  # the entries held (all of them unless streamed)
        self.streamed = False  # were entries read and let go?
        self.tool_names: dict[str, str] = {}
        self.models: dict[str, str] = {}
        self.entries: list[ir.Entry] = []
        self.made: set[str] = set()
        self.last_of: dict[str, str] = {}  # IR id -> the last ASF entry it was read from
        self.all_pi = True
        self.expected = 0  # the pi line the next chain is expected to stand for

    def split(self, group: Group) -> list[tuple[Group, bool]]:
        if len(group) > 1 and not is_pi(group):
            return [([item], False) for item in group]  # no chain after all
        return [(group, is_pi(group))]

    def assign(self, group: Group, pi: bool) -> dict[str, str]:
        """IR ids for ``group``'s entries (file order); each ASF id's own id, for a chain
        read entry by entry should its pi record be bad."""
        own: dict[str, str] = {}
        if pi:
            last_line, last = group[-1]
            target = self.ids.want(group[0][1]["legacy_id"], last_line)
            for line, value in group:
                self.ir_id[value["id"]] = target
                own[value["id"]] = target if value is last else self.ids.want(value["id"], line, report=False)
        else:
            line, value = group[0]
            self.ir_id[value["id"]] = own[value["id"]] = self.ids.want(value["id"], line)
        return own

    def take(self, group: Group, *, stream: bool) -> None:
        """One group of the file, as it is read."""
        for part, pi in self.split(group):
            if stream and self.held is None and pi:
                self.read_one(part, pi, self.assign(part, pi))
                self.streamed = True
                continue
            if self.held is None:
                self.held = []
            self.held.append((part, pi))
            self.raw.extend(part)

    def finish(self) -> None:
        """The entries held, read in file order."""
        held = self.held or []
        for _line, value in self.raw:
            if (
                value.get("type") == "response"
                and type(value.get("response_id")) is str
                and type(value.get("model")) is str
            ):
                self.models[value["response_id"]] = value["model"]
        owns = [self.assign(part, pi) for part, pi in held]  # every id first: a reference may look ahead
        for (part, pi), own in zip(held, owns, strict=True):
            self.read_one(part, pi, own)

    def read_one(self, group: Group, pi: bool, own: dict[str, str]) -> None:
        if pi:
            self.expected = self.pi_chain(group, self.expected, own)
            return
        line, value = group[0]
        self.foreign(line, value, own[value["id"]], self.resolve(value.get("parent")))
        self.all_pi = False

    def resolve(self, asf_id: Any) -> str | None:
        return self.ir_id.get(asf_id) if type(asf_id) is str else None

    def add(self, made: ir.Entry, line: int, asf_id: str, *, pi: bool = False) -> None:
        """``made`` into the document, its parent made before it (else a root; a pi entry
        keeps the parent it had, as the pi reader keeps it)."""
        parent = made.parent_id
        if parent is not None and parent not in self.made:
            self.issues.append(
                ir.Issue(
                    line,
                    "bad-parent",
                    f"parent {parent!r} is no entry read before; the entry is read as a root",
                )
            )
            if pi:
                kept = (
                    made.extra
                    if "parentId" in made.origin.synthesized
                    else {**made.extra, "parentId": parent}
                )
                origin = replace(made.origin, synthesized=made.origin.synthesized | {"parentId"})
                made = replace(made, parent_id=None, origin=origin, extra=kept)
            else:
                made = replace(made, parent_id=None, extra={**made.extra, "parent": parent})
        self.made.add(made.id)
        self.last_of[made.id] = asf_id
        self.entries.append(made)

    def foreign(self, line: int, value: JSONDict, entry_id: str, parent: str | None) -> None:
        item = value.get("item")
        if type(item) is dict and item.get("type") == "function_call" and type(item.get("call_id")) is str:
            self.tool_names[item["call_id"]] = item["name"] if type(item.get("name")) is str else ""
        made = foreign.entry(value, line, entry_id, parent, self.resolve, self.tool_names, self.models)
        if value["id"] in self.bad_parents:
            made = replace(made, extra={**made.extra, "parent": self.bad_parents[value["id"]]})
        self.add(made, line, value["id"])

    def pi_chain(self, group: Group, expected: int, own: dict[str, str]) -> int:
        last_line, last = group[-1]
        try:
            made, after = pi_entry(group, expected, self.resolve, self.issues, self.lines)
            why = problem(made) if made is not None else None
        except Exception as exc:  # a record of another shape than piconv writes: whatever it raises
            why = f"{type(exc).__name__}: {exc}"
        if why is None:
            if made is not None:
                target = self.ir_id[last["id"]]
                if made.id != target:  # its pi id is another entry's: renamed, the pi id kept as pi keeps it
                    kept = made.extra if "id" in made.origin.synthesized else {**made.extra, "id": made.id}
                    synthesized = made.origin.synthesized | {"id"}
                    made = replace(
                        made, id=target, origin=replace(made.origin, synthesized=synthesized), extra=kept
                    )
                self.add(made, last_line, last["id"], pi=True)
                last.pop("pi", None)  # read: the context walk needs none of it
            return after
        self.issues.append(
            ir.Issue(
                last_line,
                "bad-pi-record",
                f"the pi record of {last.get('legacy_id')!r} is not what piconv writes ({why[:160]}); "
                "its entries are read as any writer's",
            )
        )
        self.all_pi = False
        parent = self.resolve(group[0][1].get("parent"))
        for line, value in group:
            entry_id = own[value["id"]]
            self.foreign(line, value, entry_id, parent)
            parent = entry_id
        return expected


def read_asf(stream: IO[bytes], options: Mapping[str, Any]) -> ir.Document:
    """The reader's ``read``: the whole file into the IR (see the module's docstring)."""
    issues: list[ir.Issue] = []
    bad_parents: dict[str, Any] = {}
    file = _File()
    lines = ir.SourceLines() if options.get("keep_source") else None
    reading = _Reading(issues, lines, bad_parents)
    harness_rule = None
    stream_on = False
    first = True
    for group in groups(_entries(stream, file, issues, bad_parents)):
        if first:  # the header is read: does it claim a file piconv wrote from pi?
            first = False
            header = file.header
            harness = header.get("harness") if header is not None else None
            if header is not None and type(harness) is dict and harness.get("name") == "pi":
                # pi's own rule, when the caller hands it over (piconv.load hands every
                # reader the context rules of the other readers): the file is read as pi
                # would read it, chain by chain
                harness_rule = (options.get("context_rules") or {}).get("pi")
                kept = header.get("pi")
                line = kept.get("line", 1) if type(kept) is dict else 1
                reading.expected = line + 1 if type(line) is int else 0
            stream_on = harness_rule is not None
        reading.take(group, stream=stream_on)
    header = file.header
    if first and header is not None:  # a header and no entry
        harness = header.get("harness")
        if type(harness) is dict and harness.get("name") == "pi":
            harness_rule = (options.get("context_rules") or {}).get("pi")
    reading.finish()
    entries = reading.entries
    harness = header.get("harness") if header is not None else None
    from_pi = (
        header is not None
        and type(harness) is dict
        and harness.get("name") == "pi"
        and bool(entries or reading.raw or reading.streamed)
        and reading.all_pi
    )
    source_path = options.get("source_path")
    if from_pi:
        session = pi_session(header, source_path, issues)  # type: ignore[arg-type]
        kept = header.get("pi") if header is not None else None
        if type(kept) is dict:
            from .pi_group import spelled

            spelled(lines, session.line, session, kept)
            for (ln, value), record in zip(
                session.other_headers, kept.get("other_headers") or (), strict=False
            ):
                if type(record) is dict:
                    spelled(lines, ln, value, record)
        leaf = entries[-1].id if entries else None  # pi's rule: the last entry
    else:
        session = _session(header, source_path)
        found = resume_leaf([v for _l, v in reading.raw]) if not reading.streamed else None
        leaf = reading.resolve(found) if found is not None else None
        if leaf is None or leaf not in reading.made:
            leaf = entries[-1].id if entries else None
    if reading.streamed or (from_pi and harness_rule is not None):
        # the entries were let go (or are not needed): RFC 0001's context, when asked for,
        # is made from the document again; pi's rule for a file wholly from pi
        rule = AsfContext(None, {}, {}, harness_rule=harness_rule if from_pi else None)
    else:
        raw = reading.raw
        rule = AsfContext(
            AsfFile(header, [v for _l, v in raw], {v["id"]: v for _l, v in raw}),
            reading.ir_id,
            reading.last_of,
        )
    del reading
    return ir.Document(
        session=session,
        entries=tuple(entries),
        leaf_id=leaf,
        issues=tuple(sorted(issues, key=lambda i: i.line)),
        lines_read=file.lines_read,
        context_builder=rule,
        source_lines=lines if from_pi else None,
    )
