"""The loss report: what a conversion could not carry over, by stable code."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

MAX_LINES_PER_CODE = 1000
"""Line numbers kept per code; the count stays exact beyond it."""


@dataclass(slots=True)
class LossItem:
    code: str
    count: int = 0
    lines: list[int] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Report:
    """Accounting of one conversion. ``lines_read`` and ``entries_written`` let a reader
    check that every source line is accounted for; ``losses`` lists each difference
    between the formats by stable code with counts and line numbers."""

    format: str
    source: str | None = None
    lines_read: int = 0
    entries_read: int = 0
    entries_written: int = 0
    problems: int = 0
    losses: dict[str, LossItem] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)

    def add(self, code: str, line: int | None = None, detail: str | None = None, count: int = 1) -> None:
        item = self.losses.get(code)
        if item is None:
            item = self.losses[code] = LossItem(code)
        item.count += count
        if line is not None and len(item.lines) < MAX_LINES_PER_CODE:
            item.lines.append(line)
        if detail is not None and len(item.examples) < 5 and detail not in item.examples:
            item.examples.append(detail)

    def add_issues(self, issues: Iterable[Any]) -> None:
        """Carry the reader's problems into the report (code ``input:<problem code>``)."""
        for issue in issues:
            self.problems += 1
            self.add(f"input:{issue.code}", issue.line or None, issue.message)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "source": self.source,
            "lines_read": self.lines_read,
            "entries_read": self.entries_read,
            "entries_written": self.entries_written,
            "problems": self.problems,
            "losses": [
                {"code": i.code, "count": i.count, "lines": i.lines, "examples": i.examples}
                for i in sorted(self.losses.values(), key=lambda i: i.code)
            ],
            **({"notes": self.notes} if self.notes else {}),
        }

    def summary(self) -> str:
        """One line for stderr."""
        if not self.losses:
            lost = "nothing lost"
        else:
            lost = ", ".join(
                f"{i.code}×{i.count}" for i in sorted(self.losses.values(), key=lambda i: i.code)
            )
        src = f"{self.source}: " if self.source else ""
        return f"{src}{self.format}: {self.lines_read} lines read, {self.entries_written} written; {lost}"
