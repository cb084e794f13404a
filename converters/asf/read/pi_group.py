"""Entries piconv wrote from a pi session, read back into the IR entries they were
written from (the reading half of ``docs/formats/asf.md`` "Reading back what piconv
wrote").

The writer turns one pi entry into a chain of ASF entries sharing its ``legacy_id``,
the last carrying ``pi``: the members ASF has no field for. ``groups`` finds the chains,
``pi_entry`` rebuilds the pi entry from one (``entries.py``, ``restore.py``), and the
header's ``pi`` record gives back pi's header (``pi_session``). A record of the wrong
shape raises or builds an entry that is not well typed; ``document.py`` then reports it
and reads the chain's entries as any writer's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from piconv import ir

from .entries import body
from .restore import extra

JSONDict = dict[str, Any]
Group = list[tuple[int, JSONDict]]


def groups(entries: list[tuple[int, JSONDict]]) -> Iterator[list[tuple[int, JSONDict]]]:
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


def is_pi(group: list[tuple[int, JSONDict]]) -> bool:
    last = group[-1][1]
    return type(last.get("pi")) is dict and type(last.get("legacy_id")) is str


def pi_session(header: JSONDict, source_path: str | None, issues: list[ir.Issue]) -> ir.SessionInfo:
    """pi's header from the ASF header and its ``pi`` record; a member of the record of
    the wrong type is reported (``bad-pi-record``) and left out."""
    kept: JSONDict = header.get("pi") if type(header.get("pi")) is dict else {}
    harness = header.get("harness")
    version = harness.get("version") if type(harness) is dict else None
    number = version[len("session-v") :] if type(version) is str and version.startswith("session-v") else ""

    def wrong(member: str) -> None:
        issues.append(
            ir.Issue(1, "bad-pi-record", f"the header's pi.{member} is not what piconv writes; left out")
        )

    line = kept.get("line", 1)
    if type(line) is not int or line < 0:
        wrong("line")
        line = 1
    others = []
    listed = kept.get("other_headers") or ()
    for record in listed if type(listed) is list else ():
        if (
            type(record) is dict
            and type(record.get("line")) is int
            and record["line"] > 0
            and "value" in record
        ):
            others.append((record["line"], record["value"]))
        else:
            wrong("other_headers")
    more = kept.get("extra")
    if more is not None and type(more) is not dict:
        wrong("extra")
        more = None
    session_id = None if kept.get("id_synthesized") is True else kept.get("id", header.get("id"))
    created = kept["timestamp"] if "timestamp" in kept else header.get("created_at")
    fields = {
        "id": session_id,
        "created": created,
        "cwd": header.get("cwd"),
        "parent_session": header.get("parent_session"),
    }
    for name, value in list(fields.items()):
        if value is not None and type(value) is not str:
            wrong(name)
            fields[name] = None
    return ir.SessionInfo(
        **fields,
        source_format="pi",
        source_version=int(number) if number.isdigit() and len(number) < 10 else None,
        source_path=source_path,
        line=line,
        other_headers=tuple(others),
        extra=extra(more),
    )


def spelled(lines: ir.SourceLines | None, line: int, made: Any, left: JSONDict) -> None:
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


def pi_entry(
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
    line = line if type(line) is int and line > 0 else expected
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
    for member, kinds in (("extra", (dict,)), ("synthesized", (list,)), ("type", (str,)), ("role", (str,))):
        if member in left and type(left[member]) not in kinds:
            raise ValueError(f"pi.{member} is a {type(left[member]).__name__}")
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
    spelled(lines, line, made, left)
    return made, line + 1
