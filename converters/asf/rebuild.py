"""The pi session file rebuilt from an ASF file piconv's ASF converter wrote.

``rebuild_pi(source)`` yields the pi JSON objects, header first, in the pi file's line
order: every entry with its pi id, parentId, type, timestamp, message and every member
ASF has no field for. ``rebuild_document(source)`` gives the IR document in between;
the pi JSON is spelled by piconv's own ``pi`` format (the lossless writer), found through
the registry like any format.

How: the ASF entries are grouped back into pi entries (one pi entry became a chain of ASF
entries sharing its ``legacy_id``, the last carrying ``pi``); each entry's ``normalised``
records are undone first (``unnormalise.py``); each group is read back into an IR entry
(``rebuild_entries.py``). Parents, ``firstKeptEntryId``, ``fromId`` and label targets are
ASF ids there, each the id of an entry whose ``legacy_id`` is the pi id. ``pi.line`` puts
entries back at their line when the writer had to move them or lines were skipped.

Not rebuilt (reported as problems, see ``docs/formats/asf.md``): lines the pi reader could
not read (they never reached the ASF file); entries the ASF writer refused (a number
that is not finite); ASF lines that do not parse.

Run as ``python -m piconv.converters.asf.rebuild FILE.asf.jsonl [-o OUT.jsonl]``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from piconv import ir
from piconv.report import Report

from .reader import Source, iter_lines, open_source
from .rebuild_entries import body
from .restore import extra
from .unnormalise import restore

JSONDict = dict[str, Any]


@dataclass
class Rebuilt:
    """The rebuilt document and what could not be rebuilt (``line`` is the ASF line)."""

    document: ir.Document
    problems: list[ir.Issue] = field(default_factory=list)


def _session(header: JSONDict | None) -> ir.SessionInfo:
    if header is None:
        return ir.SessionInfo(source_format="pi", line=0)
    kept: JSONDict = header.get("pi") or {}
    version = (header.get("harness") or {}).get("version")
    number = version[len("session-v") :] if type(version) is str and version.startswith("session-v") else ""
    return ir.SessionInfo(
        id=None if kept.get("id_synthesized") else kept.get("id", header.get("id")),
        created=kept["timestamp"] if "timestamp" in kept else header.get("created_at"),
        cwd=header.get("cwd"),
        parent_session=header.get("parent_session"),
        source_format="pi",
        source_version=int(number) if number.isdigit() else None,
        line=kept.get("line", 1),
        other_headers=tuple((h["line"], h["value"]) for h in kept.get("other_headers") or ()),
        extra=extra(kept.get("extra")),
    )


def _groups(entries: list[JSONDict]) -> Iterator[list[JSONDict]]:
    """Runs of ASF entries made from one pi entry: same ``legacy_id``, each the child of
    the one before (pi ids are unique once read, so a run never spans two pi entries)."""
    group: list[JSONDict] = []
    for entry in entries:
        if group and entry.get("legacy_id") == group[-1].get("legacy_id") and entry.get("parent") == group[-1].get("id"):
            group.append(entry)
            continue
        if group:
            yield group
        group = [entry]
    if group:
        yield group


def rebuild_document(source: Source) -> Rebuilt:
    """The IR document an ASF file written by piconv was made from (path, bytes or stream)."""
    stream, close = open_source(source)
    header: JSONDict | None = None
    entries: list[JSONDict] = []
    problems: list[ir.Issue] = []
    lines: dict[str, int] = {}
    try:
        for lineno, value, code, message in iter_lines(stream):
            if value is None:
                problems.append(ir.Issue(lineno, code or "unreadable", message or ""))
                continue
            if lineno == 1 and value.get("type") == "session":
                header = restore(value)
                continue
            lines[value.get("id")] = lineno  # type: ignore[index]
            entries.append(restore(value))
    finally:
        if close:
            stream.close()
    if header is None:
        problems.append(ir.Issue(1, "no-header", "line 1 is no ASF session header: the pi header is not rebuilt"))
    session = _session(header)
    pi_of = {e.get("id"): e.get("legacy_id") for e in entries}

    def resolve(asf_id: Any) -> str | None:
        return pi_of.get(asf_id) if asf_id is not None else None

    out: list[ir.Entry] = []
    expected = session.line + 1
    for group in _groups(entries):
        left: JSONDict = group[-1].get("pi") or {}
        refused = [e for e in group if e.get("type") == "pi:refused"]
        line = left.get("line")
        if line is None and refused:
            line = (refused[0].get("pi") or {}).get("line")
        line = line if type(line) is int else expected
        expected = line + 1
        if refused:
            reason = (refused[0].get("pi") or {}).get("refused")
            problems.append(ir.Issue(lines[refused[0]["id"]], "entry-refused",
                                     f"pi line {line} (id {group[0].get('legacy_id')!r}) was refused by the writer: {reason}"))
            continue
        timestamp = left["timestamp"] if "timestamp" in left else group[-1].get("ts")
        origin = ir.Origin(line, left.get("type") if type(left.get("type")) is str else None, left.get("role"),
                           frozenset(left.get("synthesized") or ()))
        out.append(ir.Entry(group[0]["legacy_id"], resolve(group[0].get("parent")), timestamp,
                            body(group, left, resolve), origin, extra(left.get("extra"))))
    document = ir.Document(session=session, entries=tuple(out), leaf_id=out[-1].id if out else None,
                           issues=tuple(problems))
    return Rebuilt(document, problems)


def write_pi(rebuilt: Rebuilt, out: Any) -> None:
    """The rebuilt document as pi JSONL, by piconv's ``pi`` format."""
    from piconv.registry import get_registry

    get_registry().get("pi").write(rebuilt.document, out, {}, Report(format="pi"))


def rebuild_pi(source: Source) -> Iterator[Any]:
    """The pi session's JSON values, header first, in the pi file's line order."""
    buffer = io.BytesIO()
    write_pi(rebuild_document(source), buffer)
    for line in buffer.getvalue().splitlines():
        try:
            yield orjson.loads(line)
        except orjson.JSONDecodeError:  # a lone surrogate, written as its \\u escape
            yield json.loads(line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m piconv.converters.asf.rebuild",
        description="Rebuild the pi session file (JSONL) from an ASF file piconv wrote.",
    )
    parser.add_argument("file", help="the ASF file ('-' reads stdin)")
    parser.add_argument("-o", "--output", help="the pi file to write (default: stdout)")
    args = parser.parse_args(argv)
    try:
        rebuilt = rebuild_document(sys.stdin.buffer if args.file == "-" else args.file)
    except OSError as exc:
        print(f"{args.file}: cannot read: {exc.strerror or exc}", file=sys.stderr)
        return 3
    if args.output:
        with open(args.output, "wb") as out:
            write_pi(rebuilt, out)
    else:
        try:
            write_pi(rebuilt, sys.stdout.buffer)
            sys.stdout.flush()
        except BrokenPipeError:  # the reader went away (| head): stop quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
    for issue in rebuilt.problems:
        print(f"{args.file}:{issue.line}: [{issue.code}] {issue.message}", file=sys.stderr)
    return 1 if rebuilt.problems else 0


if __name__ == "__main__":
    sys.exit(main())
