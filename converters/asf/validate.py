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

import functools
import hashlib
import re
from importlib import resources
from typing import Any

import orjson
from piconv.ir import Issue

from .checks import Ancestry, header_proven_valid, proven_valid
from .ids import ENVELOPE, CanonicalError, envelope_id, is_canonical_ts
from .jcs import canonical, is_plain
from .reader import Source, iter_raw_lines, number_problem, open_source

__all__ = ["CODES", "check", "validate_asf"]

SUPPORTED_MINORS = range(5, 12)
MAX_ISSUES = 1000

CODES = {
    "truncated": "the final line is cut short (tolerated: the rest of the file is read)",
    "not-json": "a line that does not parse as JSON",
    "not-object": "a line that is JSON but not an object",
    "blank-line": "an empty line",
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


@functools.lru_cache(maxsize=1)
def _validator() -> Any:
    """Compiled once per process: building a validator costs far more than using one."""
    import jsonschema

    schema = orjson.loads(resources.files(__package__).joinpath("schema/asf.schema.json").read_bytes())
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


_FORMAT = re.compile(r"agentsession/(\d+)\.(\d+)")


def _schema_issues(lineno: int, value: dict[str, Any]) -> list[Issue]:
    validator = _validator()
    out = []
    for err in validator.iter_errors(value):
        path = "/".join(str(p) for p in err.absolute_path)
        out.append(Issue(lineno, "schema", f"{path or '(line)'}: {err.message[:300]}"))
        if len(out) >= 5:
            break
    return out


def validate_asf(source: Source) -> list[Issue]:
    """Every problem in the ASF file at ``source`` (a path, bytes or a binary stream)."""
    stream, close = open_source(source)
    try:
        return _validate(stream)
    finally:
        if close:
            stream.close()


def _validate(stream: Any) -> list[Issue]:
    issues: list[Issue] = []
    add = issues.append
    validator = _validator()
    parents = Ancestry()
    call_ids: dict[str, int] = {}
    header: dict[str, Any] | None = None
    deferred_base: tuple[int, str] | None = None
    for lineno, raw, value, code, message in iter_raw_lines(stream, exact_numbers=False):
        if len(issues) >= MAX_ISSUES:
            break
        plain = False
        if value is not None and code is None:
            plain = is_plain(value)
            if not plain:  # only a float or a big integer can be a whole number no binary64 holds
                message = number_problem(raw)
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
                if not validator.is_valid(value):
                    issues.extend(_schema_issues(1, value))
                fmt = value.get("format")
                m = _FORMAT.fullmatch(fmt) if type(fmt) is str else None
                if m is None or int(m.group(1)) != 0 or int(m.group(2)) not in SUPPORTED_MINORS:
                    add(Issue(1, "format-unsupported", f"format {fmt!r}: this validator reads agentsession/0.5 to 0.11"))
                base = value.get("base")
                if type(base) is str:
                    deferred_base = (1, base)
                continue
        if value.get("type") == "session":
            add(Issue(lineno, "header-repeated", "a session header may only be the first line"))
            continue
        _check_entry(lineno, value, code, validator, parents, call_ids, add, plain)
    if header is None and not any(i.code == "header-missing" for i in issues):
        add(Issue(1, "header-missing", "the file has no session header"))
    if deferred_base is not None and deferred_base[1] not in parents:
        add(Issue(1, "base-missing", f"base {deferred_base[1]} is not an entry of the file"))
    return issues


def _check_entry(
    lineno: int,
    value: dict[str, Any],
    code: str | None,
    validator: Any,
    parents: Ancestry,
    call_ids: dict[str, int],
    add: Any,
    plain: bool = False,
) -> None:
    if not proven_valid(value) and not validator.is_valid(value):
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
            expected = envelope_id(type_, parent, ts, "sha256:" + hashlib.sha256(data).hexdigest(), value.get("parents"))
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
    if parent is not None and parent not in parents:
        add(Issue(lineno, "parent-unknown", f"parent {parent} is not an earlier entry of the file"))
    for ref in value.get("parents") or ():
        if type(ref) is dict and "session" not in ref and ref.get("entry") not in parents:
            add(Issue(lineno, "ref-unknown", f"parents names {ref.get('entry')}, no earlier entry of the file"))
    if type_ == "item":
        item = value.get("item")
        if type(item) is dict and item.get("type") == "function_call":
            call_id = item.get("call_id")
            if not call_id:
                add(Issue(lineno, "call-id-empty", "a function_call needs a non-empty call_id"))
            elif call_id in call_ids:
                add(Issue(lineno, "call-id-duplicate", f"call_id {call_id!r} is already used on line {call_ids[call_id]}"))
            else:
                call_ids[call_id] = lineno
    elif type_ == "compaction":
        first_kept = value.get("first_kept")
        if type(first_kept) is str and not _on_path(parents, parent if type(parent) is str else None, first_kept):
            add(Issue(lineno, "first-kept-not-on-path", f"first_kept {first_kept} is not on this compaction's path"))
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


class WriteChecker:
    """The checks the writer runs on each line before writing it (``validate`` on):
    the schema (:func:`checks.proven_valid`, jsonschema when it proves nothing), the
    header's format, and what can be checked as lines arrive: ids unique, parents
    earlier, ``function_call`` call ids non-empty and unique, ``first_kept`` on the
    compaction's path, ``from`` / ``target`` naming earlier entries. Ids and canonical
    ``ts`` hold by construction (the writer computes them from the very body it writes)
    and I-JSON too (a body orjson or the JCS walk refuses is normalised or refused first),
    so they are not recomputed; ``check`` / ``validate_asf`` does that over a whole file.
    """

    __slots__ = ("call_ids", "path")

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.call_ids: set[str] = set()
        # jsonschema is imported only for a line the fast predicates cannot prove (none of
        # a usual conversion's): importing it and building its validator take ~0.15 s.

    def fail(self, lineno: int, code: str, message: str) -> None:
        from piconv.errors import ValidationFailed

        raise ValidationFailed(f"asf output failed validation: line {lineno}: {code}: {message}", path=self.path)

    def _call_id(self, value: dict[str, Any], lineno: int) -> None:
        item = value["item"]
        if item.get("type") == "function_call":
            call_id = item.get("call_id")
            if not call_id or call_id in self.call_ids:
                self.fail(lineno, "call-id-duplicate", f"call_id {call_id!r} is empty or already used")
            self.call_ids.add(call_id)

    def header(self, value: dict[str, Any]) -> None:
        if not header_proven_valid(value):
            for issue in _schema_issues(1, value):
                self.fail(1, issue.code, issue.message)
        fmt = value.get("format")
        m = _FORMAT.fullmatch(fmt) if type(fmt) is str else None
        if m is None or int(m.group(1)) != 0 or int(m.group(2)) not in SUPPORTED_MINORS:
            self.fail(1, "format-unsupported", f"format {fmt!r}")

    def entry(self, value: dict[str, Any], lineno: int, seen: Ancestry) -> None:
        self.shape(value, lineno)
        self.links(value, lineno, seen)

    def shape(self, value: dict[str, Any], lineno: int) -> None:
        """The checks of :meth:`entry` that need no other entry: the schema and call ids."""
        if not proven_valid(value) and not _validator().is_valid(value):
            issue = _schema_issues(lineno, value)[0]
            self.fail(lineno, issue.code, issue.message)
        if value["type"] == "item":
            self._call_id(value, lineno)

    def links(self, value: dict[str, Any], lineno: int, seen: Ancestry) -> None:
        """The checks of :meth:`entry` between entries: ids, parents, references."""
        nodes = seen.nodes
        entry_id = value["id"]
        parent = value["parent"]
        if entry_id in nodes:
            self.fail(lineno, "id-duplicate", f"id {entry_id} was already written")
        if parent is not None and parent not in nodes:
            self.fail(lineno, "parent-unknown", f"parent {parent} is not an earlier entry")
        type_ = value["type"]
        if type_ == "compaction":
            if not seen.on_path(value["first_kept"], parent):
                self.fail(lineno, "first-kept-not-on-path", f"first_kept {value['first_kept']} is not on this compaction's path")
        elif type_ == "branch_summary" or type_ == "label":
            ref = value["from" if type_ == "branch_summary" else "target"]
            if ref not in nodes:
                self.fail(lineno, "ref-unknown", f"{ref} is not an earlier entry")
