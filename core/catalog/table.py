"""Tables for a terminal: columns sized to their content, the widest text column cut to
fit the terminal's width, figures right-aligned; and the same rows as CSV.

What a session or a file name puts in a cell cannot drive the terminal: every cell passes
:func:`piconv.terminal.shown`."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass

from ..terminal import shown

MIN_TEXT = 8
"""A text column is never cut narrower than this."""


@dataclass(frozen=True, slots=True)
class Column:
    """``title``; ``numeric`` columns are right-aligned and never cut; ``flexible``
    columns give up width, widest first, when the table does not fit; a ``droppable``
    one is left out when that is still not enough."""

    title: str
    numeric: bool = False
    flexible: bool = False
    droppable: bool = False


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def render(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int, footer: Sequence[str] = ()
) -> str:
    """The table as text, at most ``width`` characters a line when the figures allow it.
    ``footer``: a last row (a total), under a rule."""
    cells = [[" ".join(shown(c).split()) for c in row] for row in rows]
    foot = [" ".join(shown(c).split()) for c in footer]
    for i in reversed(range(len(columns))):
        if columns[i].droppable and _least(columns, cells, foot) > width:
            columns = [c for j, c in enumerate(columns) if j != i]
            cells = [[v for j, v in enumerate(r) if j != i] for r in cells]
            foot = [v for j, v in enumerate(foot) if j != i]
    every = [*cells, foot] if foot else cells
    widths = [max([len(col.title), *(len(r[i]) for r in every)]) for i, col in enumerate(columns)]
    gap = 2
    flexible = [i for i, col in enumerate(columns) if col.flexible]
    while sum(widths) + gap * (len(widths) - 1) > width and flexible:
        widest = max(flexible, key=lambda i: widths[i])
        over = sum(widths) + gap * (len(widths) - 1) - width
        floor = max(MIN_TEXT, len(columns[widest].title))
        if widths[widest] <= floor:
            flexible.remove(widest)
            continue
        widths[widest] = max(floor, widths[widest] - over)

    def line(values: Sequence[str]) -> str:
        parts = []
        for i, (col, value) in enumerate(zip(columns, values, strict=True)):
            text = _cut(value, widths[i])
            parts.append(text.rjust(widths[i]) if col.numeric else text.ljust(widths[i]))
        return (" " * gap).join(parts).rstrip()

    out = [line([c.title for c in columns]), line(["─" * w for w in widths])]
    out += [line(r) for r in cells]
    if foot:
        out += [line(["─" * w for w in widths]), line(foot)]
    return "\n".join(out) + "\n"


def _least(columns: Sequence[Column], cells: Sequence[Sequence[str]], foot: Sequence[str]) -> int:
    """The narrowest the table can be: fixed columns as wide as their content, flexible
    ones at their floor, with the gaps."""
    every = [*cells, foot] if foot else list(cells)
    total = 0
    for i, col in enumerate(columns):
        content = max([len(col.title), *(len(r[i]) for r in every)])
        total += min(content, max(MIN_TEXT, len(col.title))) if col.flexible else content
    return total + 2 * (len(columns) - 1)


def to_csv(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def terminal_width() -> int:
    """The terminal's width, 100 when there is no terminal."""
    from ..terminal import terminal_width as width

    return width(100)


def figure(n: int, compact: bool = False) -> str:
    """``1,234,567``, or ``1.2M`` when ``compact``."""
    if not compact or n < 10_000:
        return f"{n:,}"
    for size, unit in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)
