"""What ``piconv list`` and ``piconv stats`` print: tables that fit the terminal, and CSV."""

from __future__ import annotations

from collections.abc import Sequence

from .listing import Catalog, Session
from .table import Column, figure, render, terminal_width, to_csv
from .usage import Report

NARROW = 80
"""Below this many columns, dates leave out the year."""
WIDE = 120
"""From this many columns on, the list shows when each session was last active too."""

ID_CHARS = 8
"""The least of a session id the list shows; more where that is not enough to tell the
sessions apart (``piconv ID`` takes what it shows)."""


def id_width(ids: list[str]) -> int:
    """The shortest length, :data:`ID_CHARS` at least, at which ``ids`` differ."""
    distinct = set(ids)
    width = ID_CHARS
    longest = max(map(len, distinct), default=ID_CHARS)
    while width < longest and len({i[:width] for i in distinct}) < len(distinct):
        width += 1
    return width


def when(stamp: str | None, short: bool = False) -> str:
    """``2026-01-05T10:00:00.123Z`` as ``2026-01-05 10:00`` (UTC), or ``01-05 10:00`` when ``short``."""
    if not stamp:
        return ""
    if len(stamp) >= 16 and stamp[10:11] == "T":
        return stamp[5 if short else 0 : 16].replace("T", " ")
    return stamp


def money(cost: float) -> str:
    return f"${cost:,.2f}" if cost >= 1 or cost == 0 else f"${cost:.4f}"


def session_table(chosen: Sequence[tuple[Session, int]], catalog: Catalog, width: int | None = None) -> str:
    """The list: a line per session, a fork or subagent indented under its parent."""
    width = width or terminal_width()
    compact = width < 110
    columns = [
        Column("ID"),
        Column("PROJECT", flexible=True, droppable=True),
        Column("TITLE", flexible=True),
        Column("STARTED"),
        *([Column("UPDATED")] if width >= WIDE else []),
        Column("TURNS", numeric=True),
        Column("TOKENS", numeric=True),
        Column("COST", numeric=True),
    ]
    rows = []
    tokens = turns = 0
    cost = 0.0
    width_id = id_width([s.id for s, _ in chosen if s.id])
    for session, depth in chosen:
        marker = "↳ " * depth
        came = f"({session.relation}) " if session.relation and depth == 0 else ""
        rows.append(
            [
                (session.id or "")[:width_id] or session.rel.rsplit("/", 1)[-1][:width_id],
                session.project,
                f"{marker}{came}{session.title}",
                when(session.created, short=width < NARROW),
                *([when(session.updated)] if width >= WIDE else []),
                f"{session.turns:,}",
                figure(session.tokens, compact),
                money(session.cost),
            ]
        )
        tokens += session.tokens
        turns += session.turns
        cost += session.cost
    if not rows:
        return f"no sessions in {catalog.directory}\n"
    count = f"{len(rows):,} session{'s' if len(rows) != 1 else ''}"
    footer = [
        count,
        "",
        "",
        "",
        *([""] if width >= WIDE else []),
        f"{turns:,}",
        figure(tokens, compact),
        money(cost),
    ]
    out = render(columns, rows, width, footer)
    if catalog.passed:
        files = "file" if len(catalog.passed) == 1 else "files"
        out += f"({len(catalog.passed):,} {files} passed over: --json says why)\n"
    return out


def _key_columns(report: Report) -> list[Column]:
    return [Column(name.upper(), flexible=name in ("model", "project", "session")) for name in report.by]


def usage_table(report: Report, width: int | None = None) -> str:
    """The report: a row per group, then the total."""
    width = width or terminal_width()
    compact = width < 100 + 12 * len(report.by)
    columns = [
        *_key_columns(report),
        Column("INPUT", numeric=True),
        Column("OUTPUT", numeric=True),
        Column("CACHE READ", numeric=True),
        Column("CACHE WRITE", numeric=True),
        Column("TOTAL TOKENS", numeric=True),
        Column("COST", numeric=True),
        Column("SESSIONS", numeric=True),
    ]

    def figures(row: object) -> list[str]:
        return [
            figure(row.input, compact),  # type: ignore[attr-defined]
            figure(row.output, compact),  # type: ignore[attr-defined]
            figure(row.cache_read, compact),  # type: ignore[attr-defined]
            figure(row.cache_write, compact),  # type: ignore[attr-defined]
            figure(row.tokens, compact),  # type: ignore[attr-defined]
            money(row.cost),  # type: ignore[attr-defined]
            f"{row.sessions:,}",  # type: ignore[attr-defined]
        ]

    if not report.rows:
        return "no usage in the sessions selected\n"
    rows = [[*r.key, *figures(r)] for r in report.rows]
    footer = ["total", *([""] * (len(report.by) - 1)), *figures(report.total)]
    note = f"(days in {report.timezone}; sessions: those with usage in the row)\n"
    return render(columns, rows, width, footer) + note


def usage_csv(report: Report) -> str:
    header = [
        *report.by,
        "input",
        "output",
        "cache_read",
        "cache_write",
        "tokens",
        "cost",
        "calls",
        "sessions",
    ]
    rows = [
        [*r.key, r.input, r.output, r.cache_read, r.cache_write, r.tokens, r.cost, r.calls, r.sessions]
        for r in report.rows
    ]
    return to_csv(header, rows)  # no total row: a sheet that adds the rows up would count it twice
