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
from .context import resume_leaf
from .pi_group import Group, groups, is_pi, pi_entry, pi_session
from .rule import AsfContext
from .unnormalise import restore
from .verify import problem
from .version import gate
from .views import leaf_nodes

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
    """One file's entries on their way into the IR, read as they come and let go: no
    parsed line outlives its entry, so reading costs the document, not the document and
    the file (RFC 0001's context is made from the document, ``rule.py``).

    A chain piconv wrote from pi becomes its IR entry as soon as it ends, another
    writer's entry at once. What may look ahead is mended at the end (``finish``): an
    assistant item takes its model from the ``response`` entry after it, and the few
    entries naming an entry not read yet (a label, a summary, a fold) are read again
    then, their lines kept until that time."""

    def __init__(self, issues: list[ir.Issue], lines: ir.SourceLines | None, bad_parents: Mapping[str, Any]):
        self.issues = issues
        self.lines = lines
        self.bad_parents = bad_parents
        self.ids = _Ids(issues)
        self.ir_id: dict[str, str] = {}  # ASF id -> the IR id of the entry it belongs to
        self.read_pi = False  # was any entry read back from piconv's pi records?
        # the IR ids of another writer's entries, once an entry was read back from pi (a
        # file piconv wrote that another writer continued): only such a file pays for it
        self.foreign_ids: set[str] = set()
        self.tool_names: dict[str, str] = {}
        self.models: dict[str, str] = {}  # response id -> the model its response entry names
        self.entries: list[ir.Entry] = []
        self.made: set[str] = set()
        self.all_pi = True
        self.expected = 0  # the pi line the next chain is expected to stand for
        self.misses = 0  # references resolved to no entry (yet)
        self.unmodelled: list[int] = []  # entries holding an assistant item whose model may come later
        self.looking_ahead: list[tuple[int, JSONDict]] = []  # (index in entries, the entry's line)

    def pi_ids(self) -> dict[str, tuple[str, ...]]:
        """The ASF ids of the entries written of each IR entry read back from pi, in
        file order (``AsfContext.pi_ids``)."""
        chains: dict[str, list[str]] = {}
        for asf_id, ir_id in self.ir_id.items():
            if ir_id not in self.foreign_ids:
                chains.setdefault(ir_id, []).append(asf_id)
        return {ir_id: tuple(asf_ids) for ir_id, asf_ids in chains.items()}

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

    def take(self, group: Group) -> None:
        """One group of the file, as it is read."""
        for part, pi in self.split(group):
            for _line, value in part:
                if (
                    value.get("type") == "response"
                    and type(value.get("response_id")) is str
                    and type(value.get("model")) is str
                ):
                    self.models[value["response_id"]] = value["model"]
            self.read_one(part, pi, self.assign(part, pi))

    def finish(self) -> None:
        """What looked ahead, mended now that every entry is read: each such entry is
        read again, keeping the parent it was added with (a parent that was no entry made
        before it stays in its ``extra``, the entry a root)."""
        for index, value in self.looking_ahead:
            added = self.entries[index]
            made = self.made_of(added.origin.line, value, added.id, added.parent_id)
            if "parent" in added.extra:
                made = replace(made, extra={**made.extra, "parent": added.extra["parent"]})
            self.entries[index] = made
        self.looking_ahead.clear()
        for index in self.unmodelled:
            entry = self.entries[index]
            message = entry.message
            if isinstance(message, ir.AssistantMessage) and message.model is None:
                model = self.models.get(message.response_id or "")
                if model is not None:
                    body = ir.MessageBody(foreign.with_model(message, model))
                    self.entries[index] = replace(entry, body=body)
        self.unmodelled.clear()

    def read_one(self, group: Group, pi: bool, own: dict[str, str]) -> None:
        if pi:
            self.expected = self.pi_chain(group, self.expected, own)
            return
        line, value = group[0]
        self.foreign(line, value, own[value["id"]], self.resolve(value.get("parent")))
        self.all_pi = False

    def resolve(self, asf_id: Any) -> str | None:
        if type(asf_id) is not str:
            return None
        found = self.ir_id.get(asf_id)
        if found is None:
            self.misses += 1
        return found

    def add(self, made: ir.Entry, line: int, *, pi: bool = False) -> None:
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
        self.entries.append(made)

    def foreign(self, line: int, value: JSONDict, entry_id: str, parent: str | None) -> None:
        item = value.get("item")
        if type(item) is dict and item.get("type") == "function_call" and type(item.get("call_id")) is str:
            self.tool_names[item["call_id"]] = item["name"] if type(item.get("name")) is str else ""
        misses = self.misses
        made = self.made_of(line, value, entry_id, parent)
        index = len(self.entries)
        if self.misses != misses:  # it names an entry not read yet: read again at the end
            self.looking_ahead.append((index, value))
        message = made.message
        if (
            isinstance(message, ir.AssistantMessage)
            and message.model is None
            and message.response_id is not None
        ):
            self.unmodelled.append(index)
        self.add(made, line)
        if self.read_pi:
            self.foreign_ids.add(made.id)

    def made_of(self, line: int, value: JSONDict, entry_id: str, parent: str | None) -> ir.Entry:
        made = foreign.entry(value, line, entry_id, parent, self.resolve, self.tool_names, self.models)
        if value["id"] in self.bad_parents:
            made = replace(made, extra={**made.extra, "parent": self.bad_parents[value["id"]]})
        return made

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
                if not self.read_pi:  # every entry read so far was another writer's
                    self.foreign_ids.update(entry.id for entry in self.entries)
                self.add(made, last_line, pi=True)
                self.read_pi = True
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
            entry_id = self.ir_id[value["id"]] = own[value["id"]]
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
        reading.take(group)
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
        and not first  # an entry was read
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
        leaf = resume_leaf(leaf_nodes(entries))
    # RFC 0001's context is made from the document when asked for (``rule.py``); pi's
    # rule for a file wholly from pi
    rule = AsfContext(
        from_pi=reading.read_pi,
        pi_ids=reading.pi_ids() if reading.read_pi and reading.foreign_ids else None,
        harness_rule=harness_rule if from_pi else None,
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
