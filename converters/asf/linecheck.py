"""The checks the writer runs on each line before writing it (``options["validate"]``).

The shape of a line is the schema's (:mod:`.schemas`, jsonschema-rs). What a schema cannot
say is checked here as lines arrive: ids unique, every parent written before its children,
``function_call`` call ids non-empty and unique, ``first_kept`` on the compaction's path,
``from`` / ``target`` naming earlier entries, and the header's ``format`` one this package
reads. Ids and the canonical ``ts`` hold by construction (the writer computes them from the
very body it writes), and so does I-JSON (a body the JCS serialiser refuses is normalised or
refused first), so they are not recomputed here; ``filecheck.validate_asf`` does that over a
whole file.
"""

from __future__ import annotations

import re
from typing import Any, NoReturn

from . import schemas
from .links import Ancestry

__all__ = ["SUPPORTED_MINORS", "WriteChecker", "format_supported"]

SUPPORTED_MINORS = range(5, 12)
_FORMAT = re.compile(r"agentsession/(\d+)\.(\d+)")


def format_supported(fmt: Any) -> bool:
    """Whether ``fmt`` is ``agentsession/0.5`` to ``0.11`` (RFC 0001, Versioning: those minors
    only add optional members and the hashes do not change)."""
    m = _FORMAT.fullmatch(fmt) if type(fmt) is str else None
    return m is not None and int(m.group(1)) == 0 and int(m.group(2)) in SUPPORTED_MINORS


class WriteChecker:
    """Checks each line the writer makes; the first failure raises
    :class:`piconv.ValidationFailed` naming the output line."""

    __slots__ = ("call_ids", "is_valid", "path")

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.call_ids: set[str] = set()
        self.is_valid = schemas.validator().is_valid

    def fail(self, lineno: int, code: str, message: str) -> NoReturn:
        from piconv.errors import ValidationFailed

        raise ValidationFailed(
            f"asf output failed validation: line {lineno}: {code}: {message}", path=self.path
        )

    def header(self, value: dict[str, Any]) -> None:
        if not self.is_valid(value):
            self.fail(1, "schema", schemas.errors(value, 1)[0])
        if not format_supported(value.get("format")):
            self.fail(1, "format-unsupported", f"format {value.get('format')!r}")

    def entry(self, value: dict[str, Any], lineno: int, seen: Ancestry) -> None:
        """Every check of the entry line ``value`` against the entries in ``seen`` (the
        caller adds it to ``seen`` once written)."""
        if not self.is_valid(value):
            self.fail(lineno, "schema", schemas.errors(value, 1)[0])
        nodes = seen.nodes
        entry_id = value["id"]
        parent = value["parent"]
        if entry_id in nodes:
            self.fail(lineno, "id-duplicate", f"id {entry_id} was already written")
        if parent is not None and parent not in nodes:
            self.fail(lineno, "parent-unknown", f"parent {parent} is not an earlier entry")
        type_ = value["type"]
        if type_ == "item":
            item = value["item"]
            if item.get("type") == "function_call":
                call_id = item.get("call_id")
                if not call_id or call_id in self.call_ids:
                    self.fail(lineno, "call-id-duplicate", f"call_id {call_id!r} is empty or already used")
                self.call_ids.add(call_id)
        elif type_ == "compaction":
            if not seen.on_path(value["first_kept"], parent):
                self.fail(
                    lineno,
                    "first-kept-not-on-path",
                    f"first_kept {value['first_kept']} is not on this compaction's path",
                )
        elif type_ == "branch_summary" or type_ == "label":
            ref = value["from" if type_ == "branch_summary" else "target"]
            if ref not in nodes:
                self.fail(lineno, "ref-unknown", f"{ref} is not an earlier entry")
