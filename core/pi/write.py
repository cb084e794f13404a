"""The ``pi`` output format: a document written back as a pi session file.

For a document read from a pi file this gives back every line's JSON value (the header,
every entry, unknown members at any depth), in the original line order; lines the reader
could not read are the only thing missing, and the report lists them. With
``--migrate`` the entries are written in pi's current (version 3) form instead: the ids
and parents the tree uses, ``firstKeptEntryId`` for version 1 compactions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import IO, Any

from ..hookspecs import hookimpl
from ..ir import Document, Entry, SessionInfo, SourceLines
from ..jsonio import dumps, report_nulls
from ..jsonl import MAX_DEPTH, layout_of, parse, same_json, too_deep, with_layout
from ..outputformat import Converter, Option
from ..records import replace
from ..report import Report
from .entries import dump_entry
from .session import js_number, looks_like_pi
from .written import line_problem


def dump_header(info: SessionInfo) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "session"}
    # a version 1 file has no version member (pi added it with version 2); an explicit
    # ``"version": 1`` is kept in ``extra``, as every value the IR's field cannot tell apart
    if info.source_version is not None and "version" not in info.extra and info.source_version != 1:
        out["version"] = info.source_version
    for key, value in (
        ("id", info.id),
        ("timestamp", info.created),
        ("cwd", info.cwd),
        ("parentSession", info.parent_session),
    ):
        if value is not None:
            out[key] = value
    out.update(info.extra)
    return out


def migrated_entry(entry: Entry, *, from_v2: bool = False) -> dict[str, Any]:
    """The entry as pi holds it in memory after loading (version 3 form); ``from_v2``: the
    file is older than version 3, whose ``hookMessage`` role pi renames ``custom``."""
    if from_v2 and entry.origin.source_role == "hookMessage":
        entry = replace(entry, origin=replace(entry.origin, source_role=None))
    value = dump_entry(entry)
    value["id"] = entry.id
    value["parentId"] = entry.parent_id
    if "firstKeptEntryIndex" in entry.extra and "firstKeptEntryId" in entry.origin.synthesized:
        value.pop("firstKeptEntryIndex", None)
        first = getattr(entry.body, "first_kept_id", None)
        if first is not None:
            value["firstKeptEntryId"] = first
    return value


def pi_lines(doc: Document, *, migrate: bool = False) -> Iterator[tuple[int, Any]]:
    """``(source line, JSON value)`` for the header, further headers and every entry,
    in source line order."""
    for line, _made, value, _migrated in pi_items(doc, migrate=migrate):
        yield line, value


def pi_items(doc: Document, *, migrate: bool = False) -> Iterator[tuple[int, Any, Any, bool]]:
    """``(source line, what the reader made of it, JSON value, migrated)`` for the header,
    further headers and every entry, in source line order; ``migrated``: ``--migrate``
    changed the value."""
    items: list[tuple[int, Any, Any, bool]] = []
    if doc.session.line > 0:  # the file had a header line
        header = dump_header(doc.session)
        moved = migrate and header.get("version") != 3
        if migrate:
            header["version"] = 3
        items.append((doc.session.line, doc.session, header, moved))
    items.extend((line, value, value, False) for line, value in doc.session.other_headers)
    # pi renames the role in a file whose header version is below 3 (``version ?? 1``)
    raw = doc.session.extra.get("version", doc.session.source_version)
    from_v2 = js_number(1 if raw is None else raw) < 3
    for entry in doc.entries:
        if migrate:
            plain, value = dump_entry(entry), migrated_entry(entry, from_v2=from_v2)
            items.append((entry.origin.line, entry, value, not same_json(plain, value)))
        else:
            items.append((entry.origin.line, entry, dump_entry(entry), False))
    items.sort(key=lambda item: item[0])
    yield from items


def spell(
    value: Any, made: Any, line: int, lines: SourceLines | None, *, changed: bool = False
) -> tuple[bytes, bool, bool]:
    """The bytes of one output line holding ``value``, whether the line differs from the
    source's (was rewritten), and whether the bytes are the source line's own: they are
    when ``made`` is the object the reader made of the line and its value is unchanged;
    else ``value`` is written with its members in the source line's order (its layout),
    where the source said it. ``changed``: the writer changed the value (a migration)."""
    if lines is None:
        return dumps(value), False, False
    own = lines.of(made, line)
    if own is not None:
        raw, layout, trusted = own
        if raw is not None and trusted and not changed:
            return raw, False, True  # the reader's own bytes for its own, untouched object
        if raw is not None and _same(raw, value):
            return raw, False, True
        if layout is not None:
            return _laid_out(value, layout), changed or raw is not None, False
    found = lines.template(line)
    if found is None:
        return dumps(value), own is not None, False
    raw, layout = found
    if raw is not None and _same(raw, value):
        return raw, False, True
    if layout is None and raw is not None:
        layout = _layout_of(raw)
    return (_laid_out(value, layout) if layout is not None else dumps(value)), True, False


def _same(raw: bytes, value: Any) -> bool:
    try:
        return same_json(parse(raw), value)
    except ValueError:
        return False


def _layout_of(raw: bytes) -> Any:
    try:
        source = parse(raw)
    except ValueError:
        return None
    return layout_of(source) if type(source) is dict else None


def _laid_out(value: Any, layout: Any) -> bytes:
    return dumps(with_layout(value, layout))


def write_pi(doc: Document, out: IO[bytes], options: Mapping[str, Any], report: Report) -> None:
    if doc.session.source_format != "pi":
        from .export import write_foreign

        write_foreign(doc, out, options, report)
        return
    validate = bool(options.get("validate"))
    migrate = bool(options.get("migrate"))
    lines = doc.source_lines
    written = 0
    anew: set[int] = set()  # lines not written as their source bytes
    header_line = doc.session.line  # 0: none; after entries when the source had it late
    items = list(pi_items(doc, migrate=migrate))
    if header_line == 0 and items and not any(looks_like_pi(value) for _l, _m, value, _c in items):
        # no header, and no entry a pi reader would take for one (only a file another
        # reader's claims made can be so): a header first, so the output is a session
        from .export import header_of

        out.write(dumps(header_of(doc, report)))
        out.write(b"\n")
        written = 1
        report.add("header-synthesized", None, "no header and no line a pi reader takes for an entry")
    for line, made, value, migrated in items:
        data, rewritten, as_read = spell(value, made, line, lines, changed=migrated)
        if not as_read and too_deep(data, value):
            # a value nested past the pi reader's limit (another reader may keep deeper
            # ones): such a line would not read back, so it is not written
            report.add("line-dropped", line, f"too-deep: nested deeper than {MAX_DEPTH} levels")
            continue
        if validate:
            problem = line_problem(value, data, header=line == header_line)
            if problem is not None:
                from ..errors import ValidationFailed

                raise ValidationFailed(
                    f"pi output failed validation: line {written + 1}: {problem}", path=report.source
                )
        out.write(data)
        out.write(b"\n")
        written += 1
        if migrated:
            report.add("line-migrated", line, "written in pi's current (version 3) form")
        elif rewritten:
            report.add("line-rewritten", line, "changed since it was read (by a filter): written anew")
        if not as_read:
            anew.add(line)
    if written == 0:  # nothing readable left (every entry refused on the way): a session still
        from .export import header_of

        out.write(dumps(header_of(doc, report)))
        out.write(b"\n")
        written = 1
        report.add("header-synthesized", None, "nothing of the session was left to write: a header alone")
    report.entries_written = written
    for issue in doc.issues:
        if issue.code in _SKIPPED_LINE_CODES:
            report.add("line-dropped", issue.line, issue.code)
    # JSON has no infinity (see piconv.jsonio): a line written anew holds null for it
    report_nulls(report, [i for i in doc.issues if i.line in anew])


_SKIPPED_LINE_CODES = {
    "not-json",
    "not-object",
    "glued-objects",
    "truncated-line",
    "invalid-utf8",
    "nul-byte",
    "line-too-long",
    "too-deep",
    "blank-line",
}


def check_pi(data: bytes) -> list[str]:
    """``piconv validate --format pi``: the file read as piconv reads a pi session; every
    line that could not be read is an error."""
    import io

    from ..errors import InputError
    from .read import read

    try:
        doc = read(io.BytesIO(data), {})
    except InputError as exc:
        return [f"line 0: {exc}"]
    return [
        f"line {i.line}: [{i.code}] {i.message}"
        for i in doc.issues
        if i.code in _SKIPPED_LINE_CODES and i.code != "blank-line"  # pi reads past a blank line
    ]


@hookimpl
def register_converters(register: Any) -> None:
    register(
        Converter(
            name="pi",
            summary="pi session JSONL again: lossless, or migrated to version 3 with --migrate",
            extension=".jsonl",
            media_type="application/jsonl",
            write=write_pi,
            check=check_pi,
            checks_while_writing=True,
            mapping_doc="docs/formats/pi.md",
            takes_leaf=False,  # the whole tree, always
            source_lines="bytes",  # an unchanged pi line is written back as its bytes
            options=(Option("--migrate", "write pi's current (version 3) form", takes_value=False),),
        )
    )
