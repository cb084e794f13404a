"""What every index page says the same way, whatever its language: the totals of a list
of sessions in one line, and a time stamp as a reader wants it.

A format's index page (``Converter.index``) gets the run's sessions as
:class:`piconv.ListedSession` records; the HTML and Markdown pages share these.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from piconv import ListedSession

_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})")


def readable_date(stamp: str) -> str:
    """``2026-01-05T10:00:00.123Z`` as ``2026-01-05 10:00`` (the time stamps are UTC);
    anything else as it is."""
    match = _STAMP.match(stamp)
    return f"{match.group(1)} {match.group(2)}" if match else stamp


def totals_line(sessions: Iterable[ListedSession]) -> str:
    """``2 sessions, 4 turns, 60 tokens, $0.01``: the sessions' count and totals."""
    count = turns = tokens = 0
    cost = 0.0
    for s in sessions:
        count += 1
        turns += s.turns
        tokens += s.tokens
        cost += s.cost
    counted = "1 session" if count == 1 else f"{count:,} sessions"
    return f"{counted}, {turns:,} turns, {tokens:,} tokens, ${cost:,.2f}"


def models_text(session: ListedSession) -> str:
    """The session's models, comma-separated."""
    return ", ".join(session.models)


RELATIONS = {"fork": "forked from", "subagent": "subagent of"}


def lineage_text(session: ListedSession) -> str:
    """How a session came from another, for the line under its title: ``forked from
    TITLE``, ``subagent of TITLE`` (``a session not in the archive`` when that one is
    missing), and how many of its entries are counted there; ``""`` for a session that
    came from none."""
    if not session.relation:
        return ""
    said = RELATIONS.get(session.relation, session.relation)
    whose = session.parent_title or (
        "a session not in the archive" if session.parent is None else session.parent
    )
    copied = session.copied
    counted = f"; {copied:,} copied entries counted there" if copied else ""
    return f"{said} {whose}{counted}"


def activity(sessions: Iterable[ListedSession]) -> list[tuple[str, int, int, float]]:
    """``(day, sessions, tokens, cost)`` for each day (UTC) any session has an entry on,
    oldest first: the sums of the sessions' ``days``, so the strip adds up to the
    sessions' totals (a fork's copies of its parent's entries counted once, on the
    parent's days)."""
    days: dict[str, list[Any]] = {}
    for s in sessions:
        for day, tokens, cost in s.days:
            figures = days.setdefault(day, [0, 0, 0.0])
            figures[0] += 1
            figures[1] += tokens
            figures[2] += cost
    return [(day, n, t, round(c, 10)) for day, (n, t, c) in sorted(days.items())]


def bar(value: float, most: float, width: int = 20) -> str:
    """``value`` as a bar of up to ``width`` blocks against the largest value ``most``
    (one block at least for anything above nothing)."""
    if most <= 0 or value <= 0:
        return ""
    return "█" * max(1, round(width * value / most))
