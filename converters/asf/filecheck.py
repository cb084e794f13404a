"""Validating an ASF file: the JSON Schema per line, then what a schema cannot express.

``validate_asf(path_or_bytes_or_stream) -> list[Issue]`` (``piconv.ir.Issue``: 1-based
line, stable code, message). An empty list means the file is valid. Checks beyond the
schema (RFC 0001): the header first and only first; a ``format`` this reader supports;
each ``id`` recomputed from the line's own members; ``ts`` in its one spelling; no
reserved member in a body; every parent earlier in the file; ids and ``function_call``
call ids unique; ``first_kept`` on the compaction's path; ``from`` and ``target`` naming
entries of the file; I-JSON values; a cut-short final line reported as ``truncated``.

Format versions: a reader of 0.11 reads 0.5 to 0.11 files as they stand (RFC 0001,
Versioning: the later minors add optional members and the hashes do not change), so the
reference examples written as 0.5 and 0.10 validate. Files before 0.5 need an in-memory
migration this validator does not implement, and later minors or majors are refused:
both are reported as ``format-unsupported``.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from piconv.ir import Issue

from . import schemas
from .ids import ENVELOPE, CanonicalError, envelope_id, is_canonical_ts
from .jcs import canonical
from .linecheck import format_supported
from .lines import Source, ijson_problem, iter_lines
from .links import Ancestry

__all__ = ["CODES", "check", "validate_asf"]

MAX_ISSUES = 1000

CODES = {
    "truncated": "the final line is cut short (tolerated: the rest of the file is read)",
    "not-json": "a line that does not parse as JSON",
    "not-object": "a line that is JSON but not an object",
    "blank-line": "an empty line",
    "too-deep": "arrays or objects nested deeper than the reader's limit (ASF_MAX_DEPTH)",
    "line-too-long": "a line longer than the reader's limit (256 MiB), not held in memory",
    "header-missing": "the first line is not a session header",
    "header-repeated": "a session header after the first line",
    "format-unsupported": "a format string this validator does not read",
    "schema": "the line does not match the JSON Schema",
    "reserved-member": "a body carries id/type/parent/parents/ts/content at top level",
    "ts-noncanonical": "ts is not in the one RFC 0001 spelling",
    "not-ijson": "a value that is not I-JSON (number, lone surrogate, repeated member)",
    "id-mismatch": "the id does not recompute from the line's members",
    "id-duplicate": "an id seen earlier in the file (read as the same entry)",
    "parent-unknown": "parent names no earlier line of the file",
    "call-id-duplicate": "a function_call call_id another function_call already holds",
    "call-id-empty": "a function_call without a call_id",
    "first-kept-not-on-path": "a compaction's first_kept is not an ancestor of it",
    "ref-unknown": "from/target/queued_from names no earlier entry of the file",
    "base-missing": "the header's base names no entry of the file",
}


def _schema_issues(lineno: int, value: dict[str, Any]) -> list[Issue]:
    return [Issue(lineno, "schema", message) for message in schemas.errors(value)]


def validate_asf(source: Source) -> list[Issue]:
    """Every problem in the ASF file at ``source`` (a path, bytes or a binary stream)."""
    issues: list[Issue] = []
    add = issues.append
    is_valid = schemas.validator().is_valid
    parents = Ancestry()
    call_ids: dict[str, int] = {}
    header: dict[str, Any] | None = None
    deferred_base: tuple[int, str] | None = None
    for line in iter_lines(source, keep_raw=True):
        if len(issues) >= MAX_ISSUES:
            break
        lineno, value, code, message = line.line, line.value, line.code, line.message
        plain = False
        if value is not None:
            plain, message = ijson_problem(line)
            if message is not None:
                code = "not-ijson"
        if code is not None:
            add(Issue(lineno, code, message or code))
        if value is None:
            continue
        if lineno == 1:
            if value.get("type") != "session":
                add(Issue(1, "header-missing", "the first line must be the session header (type session)"))
            else:
                header = value
                if not is_valid(value):
                    issues.extend(_schema_issues(1, value))
                fmt = value.get("format")
                if not format_supported(fmt):
                    add(
                        Issue(
                            1,
                            "format-unsupported",
                            f"format {fmt!r}: this validator reads agentsession/0.5 to 0.11",
                        )
                    )
                base = value.get("base")
                if type(base) is str:
                    deferred_base = (1, base)
                continue
        if value.get("type") == "session":
            add(Issue(lineno, "header-repeated", "a session header may only be the first line"))
            continue
        _check_entry(lineno, value, code, is_valid, parents, call_ids, add, plain)
    if header is None and not any(i.code == "header-missing" for i in issues):
        add(Issue(1, "header-missing", "the file has no session header"))
    if deferred_base is not None and deferred_base[1] not in parents:
        add(Issue(1, "base-missing", f"base {deferred_base[1]} is not an entry of the file"))
    return issues


def _check_entry(
    lineno: int,
    value: dict[str, Any],
    code: str | None,
    is_valid: Any,
    parents: Ancestry,
    call_ids: dict[str, int],
    add: Any,
    plain: bool = False,
) -> None:
    if not is_valid(value):
        for issue in _schema_issues(lineno, value):
            add(issue)
    entry_id = value.get("id")
    parent = value.get("parent")
    ts = value.get("ts")
    type_ = value.get("type")
    body = {k: v for k, v in value.items() if k not in ENVELOPE}
    if "content" in body:
        add(Issue(lineno, "reserved-member", "the body carries the reserved member 'content'"))
    if type(ts) is str and not is_canonical_ts(ts):
        add(Issue(lineno, "ts-noncanonical", f"ts {ts!r} is not in the canonical spelling"))
    if code != "not-ijson" and type(entry_id) is str and type(type_) is str and type(ts) is str:
        try:
            data = _canonical_body(body, plain)
            expected = envelope_id(
                type_, parent, ts, "sha256:" + hashlib.sha256(data).hexdigest(), value.get("parents")
            )
        except CanonicalError as exc:
            add(Issue(lineno, "not-ijson", str(exc)))
        else:
            if expected != entry_id:
                add(Issue(lineno, "id-mismatch", f"id {entry_id} does not recompute (expected {expected})"))
    if type(entry_id) is not str:
        return
    if entry_id in parents:
        add(Issue(lineno, "id-duplicate", f"id {entry_id} was already seen: the line is read as that entry"))
        return
    # A member of the wrong type was reported by the schema; only ids are looked up.
    if type(parent) is str and parent not in parents:
        add(Issue(lineno, "parent-unknown", f"parent {parent} is not an earlier entry of the file"))
    refs = value.get("parents")
    for ref in refs if type(refs) is list else ():
        if (
            type(ref) is dict
            and "session" not in ref
            and type(ref.get("entry")) is str
            and ref["entry"] not in parents
        ):
            add(
                Issue(
                    lineno, "ref-unknown", f"parents names {ref.get('entry')}, no earlier entry of the file"
                )
            )
    if type_ == "item":
        item = value.get("item")
        if type(item) is dict and item.get("type") == "function_call":
            call_id = item.get("call_id")
            if call_id is None or call_id == "":
                add(Issue(lineno, "call-id-empty", "a function_call needs a non-empty call_id"))
            elif type(call_id) is not str:
                pass  # the schema says what is wrong with it
            elif call_id in call_ids:
                add(
                    Issue(
                        lineno,
                        "call-id-duplicate",
                        f"call_id {call_id!r} is already used on line {call_ids[call_id]}",
                    )
                )
            else:
                call_ids[call_id] = lineno
    elif type_ == "compaction":
        first_kept = value.get("first_kept")
        if type(first_kept) is str and not _on_path(
            parents, parent if type(parent) is str else None, first_kept
        ):
            add(
                Issue(
                    lineno,
                    "first-kept-not-on-path",
                    f"first_kept {first_kept} is not on this compaction's path",
                )
            )
    for member in ("from", "target", "queued_from"):
        ref = value.get(member)
        if type(ref) is str and ref not in parents and type_ in _REF_TYPES.get(member, ()):
            add(Issue(lineno, "ref-unknown", f"{member} {ref} is not an earlier entry of the file"))
    parents.add(entry_id, parent if type(parent) is str else None)


def _canonical_body(body: dict[str, Any], plain: bool) -> bytes:
    if plain:  # the line is plain (jcs.is_plain), so its body is: orjson's sorted form is JCS
        try:
            return orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:
            pass  # a lone surrogate: canonical() says so as a CanonicalError
    return canonical(body)


_REF_TYPES = {
    "from": ("branch_summary",),
    "target": ("label", "outcome", "decision", "dispatch"),
    "queued_from": ("item",),
}


def _on_path(parents: Ancestry, start: str | None, wanted: str) -> bool:
    if not parents.orphans:
        return parents.on_path(wanted, start)
    # Some entry names a parent that is no earlier entry (already reported): walk the
    # parent links one by one, as far as they go.
    nodes = parents.nodes
    seen = 0
    node = start
    while node is not None and seen <= len(nodes):
        if node == wanted:
            return True
        pair = nodes.get(node)
        node = pair[0] if pair is not None else None
        seen += 1
    return False


def check(data: bytes) -> list[str]:
    """The registry's check function: problems as ``"line N: code: message"``."""
    return [f"line {i.line}: {i.code}: {i.message}" for i in validate_asf(data)]
