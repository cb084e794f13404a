"""The ``asf`` reader: an ``agentsession/0.11`` file into the IR.

Every line is read by the one JSONL line reader (``lines.py`` over ``piconv.jsonl``) and undone from I-JSON normalisation
(``unnormalise.py``); ids and parents are checked as they are read: an entry with no id,
or an id the file already used, is reported with its line and skipped; a parent that is
not an earlier entry is reported and the entry kept as a root. Nothing else is refused.

Entries piconv wrote from a pi session (a chain of ASF entries sharing a ``legacy_id``,
the last carrying a ``pi`` record) are read back into the very IR entry they were
written from (``read_entries.py``), so pi → ASF → pi gives back every entry's JSON value.
Any other entry is read by ``foreign.py``. The context at a leaf is RFC 0001's
(``context.py``), except for a file whose every entry came from pi: the harness's own rule
(the ``pi`` reader's) gives what pi sent, and the RFC's agrees with it turn by turn
(``tests/test_asf_read.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import IO, Any

from piconv import ir
from piconv.ir import replace

from ..lines import iter_lines
from . import foreign
from .context import AsfFile, resume_leaf
from .entries import body
from .restore import extra
from .rule import AsfContext
from .unnormalise import restore

JSONDict = dict[str, Any]

# --------------------------------------------------------------------------- lines


def _lines(
    stream: IO[bytes], issues: list[ir.Issue], bad_parents: dict[str, Any]
) -> tuple[JSONDict | None, list[tuple[int, JSONDict]], int]:
    """The header and the entries that pass the id checks, with their line numbers; every
    problem is added to ``issues``, and the parent of an entry whose parent is no earlier
    entry to ``bad_parents`` (the entry's own ``parent`` is then ``None``)."""
    header: JSONDict | None = None
    entries: list[tuple[int, JSONDict]] = []
    seen: set[str] = set()
    lineno = 0
    for line in iter_lines(stream):
        lineno, value = line.line, line.value
        if value is None:
            issues.append(ir.Issue(lineno, line.code or "unreadable", f"{line.message}; skipped"))
            continue
        if value.get("type") == "session":
            if lineno == 1:
                header = restore(value)
                fmt = header.get("format")
                if type(fmt) is not str or not fmt.startswith("agentsession/"):
                    issues.append(
                        ir.Issue(
                            1, "not-asf", f"the header's format {_shown(fmt)} is no agentsession/ version"
                        )
                    )
            else:
                issues.append(ir.Issue(lineno, "extra-header", "a session header after line 1; skipped"))
            continue
        if lineno == 1:
            issues.append(ir.Issue(1, "no-header", 'line 1 is no ASF session header (type "session")'))
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
        entries.append((lineno, restore(value)))
    if lineno == 0:
        issues.append(ir.Issue(0, "empty", "the file holds no line"))
    return header, entries, lineno


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _groups(entries: list[tuple[int, JSONDict]]) -> Iterator[list[tuple[int, JSONDict]]]:
    """Runs of ASF entries made from one pi entry: one ``legacy_id``, each the child of
    the one before, every one but the last without a ``pi`` record. An entry no such run
    claims is a run of its own."""
    group: list[tuple[int, JSONDict]] = []
    for line, value in entries:
        if group:
            last = group[-1][1]
            legacy = value.get("legacy_id")
            if (
                type(legacy) is str
                and legacy == last.get("legacy_id")
                and value.get("parent") == last["id"]
                and "pi" not in last
            ):
                group.append((line, value))
                continue
            yield group
        group = [(line, value)]
    if group:
        yield group


def _is_pi(group: list[tuple[int, JSONDict]]) -> bool:
    last = group[-1][1]
    return type(last.get("pi")) is dict and type(last.get("legacy_id")) is str


# --------------------------------------------------------------------------- the document


def _pi_session(header: JSONDict, source_path: str | None) -> ir.SessionInfo:
    kept: JSONDict = header.get("pi") or {}
    harness = header.get("harness")
    version = harness.get("version") if type(harness) is dict else None
    number = version[len("session-v") :] if type(version) is str and version.startswith("session-v") else ""
    return ir.SessionInfo(
        id=None if kept.get("id_synthesized") else kept.get("id", header.get("id")),
        created=kept["timestamp"] if "timestamp" in kept else header.get("created_at"),
        cwd=header.get("cwd"),
        parent_session=header.get("parent_session"),
        source_format="pi",
        source_version=int(number) if number.isdigit() else None,
        source_path=source_path,
        line=kept.get("line", 1),
        other_headers=tuple((h["line"], h["value"]) for h in kept.get("other_headers") or ()),
        extra=extra(kept.get("extra")),
    )


def _session(header: JSONDict | None, source_path: str | None) -> ir.SessionInfo:
    if header is None:
        return ir.SessionInfo(source_format="asf", source_path=source_path)
    modelled = {"type", "id", "created_at", "cwd", "parent_session"}
    fmt = header.get("format")
    minor = fmt.rpartition(".")[2] if type(fmt) is str else ""
    return ir.SessionInfo(
        id=foreign._str(header.get("id")),
        created=foreign._str(header.get("created_at")),
        cwd=foreign._str(header.get("cwd")),
        parent_session=foreign._str(header.get("parent_session")),
        source_format="asf",
        source_version=int(minor) if minor.isdigit() else None,
        source_path=source_path,
        line=1,
        extra={k: v for k, v in header.items() if k not in modelled} or ir.EMPTY,
    )


def _spelled(lines: ir.SourceLines | None, line: int, made: Any, left: JSONDict) -> None:
    """The pi line's spelling the writer kept in ``left`` (``layout``, ``text``), noted
    for a pi writer; the text is only a claim (the file may have been edited since), which
    the writer checks against what it writes."""
    if lines is None:
        return
    layout = left.get("layout")
    text = left.get("text")
    raw = text.encode("utf-8", "surrogatepass") if type(text) is str else None
    if type(layout) is dict or raw is not None:
        lines.add(line, made, raw, layout if type(layout) is dict else None, trusted=False)


def _pi_entry(
    group: list[tuple[int, JSONDict]],
    expected: int,
    resolve: Any,
    issues: list[ir.Issue],
    lines: ir.SourceLines | None = None,
) -> tuple[ir.Entry | None, int]:
    """The pi entry ``group`` was written from, and the pi line the next one expects."""
    values = [v for _line, v in group]
    left: JSONDict = values[-1].get("pi") or {}
    refused = [(line, v) for line, v in group if v.get("type") == "pi:refused"]
    line = left.get("line")
    if line is None and refused:
        line = (refused[0][1].get("pi") or {}).get("line")
    line = line if type(line) is int else expected
    if refused:
        reason = (refused[0][1].get("pi") or {}).get("refused")
        issues.append(
            ir.Issue(
                refused[0][0],
                "entry-refused",
                f"pi line {line} (id {values[0].get('legacy_id')!r}) was refused by the ASF writer: {reason}",
            )
        )
        return None, line + 1
    timestamp = left["timestamp"] if "timestamp" in left else values[-1].get("ts")
    kind = left.get("type")
    origin = ir.Origin(
        line, kind if type(kind) is str else None, left.get("role"), frozenset(left.get("synthesized") or ())
    )
    made = ir.Entry(
        values[0]["legacy_id"],
        resolve(values[0].get("parent")),
        timestamp,
        body(values, left, resolve),
        origin,
        extra(left.get("extra")),
    )
    _spelled(lines, line, made, left)
    return made, line + 1


def read_asf(stream: IO[bytes], options: Mapping[str, Any]) -> ir.Document:
    """The reader's ``read``: the whole file into the IR (see the module's docstring)."""
    issues: list[ir.Issue] = []
    bad_parents: dict[str, Any] = {}
    header, raw, lines_read = _lines(stream, issues, bad_parents)
    groups = list(_groups(raw))
    ir_id: dict[str, str] = {}  # ASF id -> the IR id of the entry it belongs to
    last_of: dict[str, str] = {}  # IR id -> the ASF id of its group's last entry
    pi_groups = [_is_pi(g) for g in groups]
    for group, is_pi in zip(groups, pi_groups, strict=True):
        own = group[0][1]["legacy_id"] if is_pi else group[0][1]["id"]
        for _line, value in group:
            ir_id[value["id"]] = own
        last_of[own] = group[-1][1]["id"]
    harness = header.get("harness") if header is not None else None
    from_pi = bool(groups) and all(pi_groups) and type(harness) is dict and harness.get("name") == "pi"

    def resolve(asf_id: Any) -> str | None:
        return ir_id.get(asf_id) if type(asf_id) is str else None

    tool_names: dict[str, str] = {}
    models: dict[str, str] = {}
    for _line, value in raw:
        if (
            value.get("type") == "response"
            and type(value.get("response_id")) is str
            and type(value.get("model")) is str
        ):
            models[value["response_id"]] = value["model"]
    entries: list[ir.Entry] = []
    lines = ir.SourceLines() if options.get("keep_source") else None
    expected = (header.get("pi") or {}).get("line", 1) + 1 if from_pi and header is not None else 0
    for group, is_pi in zip(groups, pi_groups, strict=True):
        if is_pi:
            made, expected = _pi_entry(group, expected, resolve, issues, lines)
            if made is not None:
                entries.append(made)
            continue
        for line, value in group:
            item = value.get("item")
            if (
                type(item) is dict
                and item.get("type") == "function_call"
                and type(item.get("call_id")) is str
            ):
                tool_names[item["call_id"]] = item["name"] if type(item.get("name")) is str else ""
            made = foreign.entry(
                value, line, ir_id[value["id"]], resolve(value.get("parent")), resolve, tool_names, models
            )
            if value["id"] in bad_parents:
                made = replace(made, extra={**made.extra, "parent": bad_parents[value["id"]]})
            entries.append(made)
    source_path = options.get("source_path")
    if from_pi:
        session = _pi_session(header, source_path)  # type: ignore[arg-type]
        kept = header.get("pi") if header is not None else None
        if type(kept) is dict:
            _spelled(lines, session.line, session, kept)
            for (ln, value), record in zip(
                session.other_headers, kept.get("other_headers") or (), strict=False
            ):
                if type(record) is dict:
                    _spelled(lines, ln, value, record)
        leaf = entries[-1].id if entries else None  # pi's rule: the last entry
    else:
        session = _session(header, source_path)
        found = resume_leaf([v for _l, v in raw])
        leaf = ir_id.get(found) if found is not None else None
    asf = AsfFile(header, [v for _l, v in raw], {v["id"]: v for _l, v in raw})
    # pi's own rule, when the caller hands it over (piconv.load hands every reader the
    # context rules of the other readers): the file is then read as pi would read it
    harness_rule = (options.get("context_rules") or {}).get("pi") if from_pi else None
    rule = AsfContext(asf, ir_id, last_of, harness_rule=harness_rule)
    return ir.Document(
        session=session,
        entries=tuple(entries),
        leaf_id=leaf,
        issues=tuple(issues),
        lines_read=lines_read,
        context_builder=rule,
        source_lines=lines if from_pi else None,
    )
