"""The end of a run: what was converted, skipped, failed, and the problems found, by code."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..terminal import shown
from .progress import human_bytes, human_time

MAX_LISTED_FAILURES = 20
"""Failures named one by one in the text summary; the JSON report lists them all."""


@dataclass(slots=True)
class Summary:
    input_dir: str
    output_dir: str
    formats: list[str]
    executor: str
    jobs: int | None
    converted: int = 0
    up_to_date: int = 0
    unchanged_content: int = 0
    failed: int = 0
    refused: int = 0
    bytes_converted: int = 0
    seconds: float = 0.0
    temps_removed: int = 0
    problems: Counter[str] = field(default_factory=Counter)
    failure_codes: Counter[str] = field(default_factory=Counter)
    failures: list[dict[str, Any]] = field(default_factory=list)
    indexes: list[str] = field(default_factory=list)
    manifest_dropped: int = 0
    """Manifest lines that were torn or malformed, dropped on load (those inputs are redone)."""
    fatal: str | None = None
    """Why the run stopped before its end (a full or read-only disk), or None."""
    archives: list[str] = field(default_factory=list)
    """The archive files written (``--to sqlite``: ``OUTDIR/archive.db``)."""
    notes: list[str] = field(default_factory=list)
    """What the run had to do that the user should know (a damaged archive moved aside)."""
    not_selected: Counter[str] = field(default_factory=Counter)
    """Sessions left out, by the option that left them out (``--since``, ``--until``,
    ``--project``)."""
    skipped: list[dict[str, str]] = field(default_factory=list)
    """Files passed over as pi passes them over (not sessions, empty, an earlier run's
    output folder): ``input``, ``code``, ``message``. Never a failure."""

    @property
    def selected_out(self) -> int:
        """How many sessions the selection left out."""
        return sum(self.not_selected.values())

    def add_skipped(self, rel: str, code: str, message: str) -> None:
        self.skipped.append({"input": rel, "code": code, "message": message})

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.refused == 0 and self.fatal is None

    def add_failure(self, rel: str, errors: dict[str, dict[str, str]]) -> None:
        self.failed += 1
        for fmt, err in sorted(errors.items()):
            self.failure_codes[err["code"]] += 1
            self.failures.append({"input": rel, "format": None if fmt in ("*", "load") else fmt, **err})

    def add_refused(self, rel: str, code: str, message: str) -> None:
        self.refused += 1
        self.failure_codes[code] += 1
        self.failures.append({"input": rel, "format": None, "code": code, "message": message})

    def to_json(self) -> dict[str, Any]:
        return {
            "input": self.input_dir,
            "output": self.output_dir,
            "formats": self.formats,
            "executor": self.executor,
            "jobs": self.jobs,
            "converted": self.converted,
            "skipped_up_to_date": self.up_to_date + self.unchanged_content,
            "skipped_unchanged_content": self.unchanged_content,
            "failed": self.failed,
            "refused": self.refused,
            "bytes_converted": self.bytes_converted,
            "seconds": round(self.seconds, 3),
            "temporary_files_removed": self.temps_removed,
            "problems_by_code": dict(sorted(self.problems.items())),
            "failures_by_code": dict(sorted(self.failure_codes.items())),
            "failures": self.failures,
            "indexes": self.indexes,
            "archives": self.archives,
            "notes": self.notes,
            "not_selected": self.selected_out,
            "not_selected_by": dict(sorted(self.not_selected.items())),
            "skipped": self.skipped,
            "manifest_records_dropped": self.manifest_dropped,
            "fatal": self.fatal,
        }

    def render(self) -> str:
        skipped = self.up_to_date + self.unchanged_content
        lines = [
            f"piconv: {self.converted} converted, {skipped} skipped as up to date, "
            f"{self.failed + self.refused} failed ({human_bytes(self.bytes_converted)} in {human_time(self.seconds)})"
        ]
        for note in self.notes:
            lines.append(f"piconv: {note}")
        if self.selected_out:
            by = ", ".join(f"{flag}: {n}" for flag, n in sorted(self.not_selected.items()))
            lines.append(f"piconv: {self.selected_out} sessions not selected ({by})")
        if self.skipped:
            codes = Counter(s["code"] for s in self.skipped)
            lines.append(
                f"piconv: {len(self.skipped)} skipped, not sessions: "
                + ", ".join(f"{c}: {n}" for c, n in sorted(codes.items()))
            )
            for s in self.skipped[:MAX_LISTED_FAILURES]:
                lines.append(f"piconv:   {s['input']}: {s['message']}")
            if len(self.skipped) > MAX_LISTED_FAILURES:
                lines.append(f"piconv:   … and {len(self.skipped) - MAX_LISTED_FAILURES} more (see --report)")
        if self.manifest_dropped:
            lines.append(
                f"piconv: manifest: {self.manifest_dropped} torn or malformed records dropped "
                "(those sessions are converted again)"
            )
        if self.problems:
            lines.append(
                "piconv: problems in the input: "
                + ", ".join(f"{c}: {n}" for c, n in sorted(self.problems.items()))
            )
        if self.failure_codes:
            lines.append(
                "piconv: failures: " + ", ".join(f"{c}: {n}" for c, n in sorted(self.failure_codes.items()))
            )
        for f in self.failures[:MAX_LISTED_FAILURES]:
            where = f" [{f['format']}]" if f.get("format") else ""
            lines.append(f"piconv:   {f['input']}{where}: {f['code']}: {f['message']}")
        if len(self.failures) > MAX_LISTED_FAILURES:
            lines.append(f"piconv:   … and {len(self.failures) - MAX_LISTED_FAILURES} more (see --report)")
        return "\n".join(shown(line) for line in lines) + "\n"
