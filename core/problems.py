"""Problems met while reading a session: a line number, a stable code, a message."""

from __future__ import annotations

from typing import Any

from .records import Frozen, frozen


@frozen
class Problem(Frozen):
    line: int
    """1-based physical line number (0: the whole file)."""
    code: str
    """Stable code, one of :data:`PROBLEM_CODES`."""
    message: str
    """Human text; callers prefix the file name."""

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "code": self.code, "message": self.message}


PROBLEM_CODES: dict[str, str] = {
    # reader: one physical line
    "not-json": "the line is not valid JSON; skipped",
    "not-object": "the line is JSON but not an object; skipped",
    "glued-objects": "two or more JSON objects on one line; skipped, or each kept with --recover-glued",
    "truncated-line": "the last line has no newline and is not valid JSON (cut short); skipped",
    "invalid-utf8": "the line is not valid UTF-8; skipped",
    "lone-surrogate": "a string holds a lone UTF-16 surrogate escape; read with the standard library, kept",
    "infinite-number": "a number beyond the double range; kept as infinity, as JavaScript reads it",
    "too-deep": "arrays or objects nested deeper than 200 levels (MAX_DEPTH); skipped",
    "nul-byte": "the line holds a raw NUL byte; skipped",
    "bom": "the file starts with a UTF-8 byte order mark; read without it",
    "crlf": "CRLF line endings (reported once per file); read without the CR",
    "blank-line": "an empty or whitespace-only line",
    "line-too-long": "the line is longer than the limit (256 MiB); skipped without being held in memory",
    # session: header and tree
    "missing-header": "no session header line",
    "late-header": "the header comes after entries",
    "header-without-id": "the header has no string id",
    "extra-header": "a further session header line; kept, not part of the tree",
    "missing-id": "an entry without a string id; given a stable synthetic one",
    "duplicate-id": "an id used again later; the later entry wins, the earlier is renamed",
    "bad-parent": "a parentId that is not a string or null; the entry becomes a root",
    "dangling-parent": "a parentId naming no entry; the entry becomes a root",
    "parent-cycle": "parent links form a cycle; cut at its first member in the file",
}

# The codes the line reader emits (docs/formats/pi-reader.md lists each).
READER_CODES: frozenset[str] = frozenset(
    {
        "not-json",
        "not-object",
        "glued-objects",
        "truncated-line",
        "invalid-utf8",
        "lone-surrogate",
        "infinite-number",
        "too-deep",
        "nul-byte",
        "bom",
        "crlf",
        "blank-line",
        "line-too-long",
    }
)

# Codes whose line keeps its data (or had none to lose): worth showing, not worth alarm.
INFO_CODES: frozenset[str] = frozenset({"blank-line", "bom", "crlf", "lone-surrogate", "infinite-number"})
