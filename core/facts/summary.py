"""What an archive says about a session: title, project, dates, models, turns, tokens, cost.

One definition for every place that lists sessions (the directory run's index, the
``sqlite`` format's ``sessions`` table), public as :func:`piconv.session_facts` so a
converter reaches it through the public API; :class:`ListedSession` is one session as a
format's index page gets it (the run keeps the facts in its manifest and hands them to
the formats that declare a page, ``Converter.index``).
"""

from __future__ import annotations

from typing import Any

from ..ir import Document
from ..records import Frozen, frozen
from .spending import counted, models_used, usage_totals
from .titles import clean_title, first_prompt, header_title, project_name


def day_of(stamp: Any) -> str | None:
    """The day (UTC, as pi records time) of an ISO 8601 time stamp, or None."""
    if isinstance(stamp, str) and len(stamp) >= 10 and stamp[4:5] == "-" and stamp[7:8] == "-":
        return stamp[:10]
    return None


def activity_facts(doc: Document) -> dict[str, Any]:
    """``days``: for each day (UTC) the session has a counted entry on, ``[entries, tokens,
    cost]`` of those entries (:func:`counted`): the index's activity strip adds these up."""
    days: dict[str, list[Any]] = {}
    for entry, _turns, tokens, cost in counted(doc):
        day = day_of(entry.timestamp)
        if day is None:
            continue
        figures = days.setdefault(day, [0, 0, 0.0])
        figures[0] += 1
        figures[1] += tokens
        figures[2] += cost
    return {"days": {day: [n, t, round(c, 10)] for day, (n, t, c) in sorted(days.items())}}


def session_facts(doc: Document, source_path: str | None = None) -> dict[str, Any]:
    """The facts an archive lists about ``doc``. ``tokens`` and ``cost`` are totals over
    every entry of the file (all branches), each call counted by
    :func:`piconv.ir.total_tokens`; ``models`` are ``provider/model`` in order of first use."""
    session = doc.session
    stamps = [entry.timestamp for entry in doc.entries if isinstance(entry.timestamp, str)]
    totals = usage_totals(doc.entries)
    name = doc.session_name()
    prompt = first_prompt(doc)
    created = session.created if isinstance(session.created, str) else (stamps[0] if stamps else None)
    path = source_path or session.source_path
    return {
        "id": session.id,
        "name": name,
        "first_prompt": prompt,
        "title": clean_title(name or header_title(doc) or "") or prompt or None,
        "project": project_name(session.cwd, path),
        "cwd": session.cwd if isinstance(session.cwd, str) else None,
        "created": created,
        "updated": max(stamps) if stamps else created,
        "models": models_used(doc.entries),
        "turns": totals.turns,
        "entries": len(doc.entries),
        "tokens": totals.tokens,
        "cost": totals.cost,
    }


@frozen
class ListedSession(Frozen):
    """One session on an index page, with the link to the format's output of it.

    - ``project``: the project it belongs to (:func:`piconv.facts.titles.project_name`).
    - ``title``: its name, else its first prompt, else its file name; one line, at most
      120 characters (a longer one ends with ``…``).
    - ``file``: the session file's name.
    - ``output``: the output's path below the output directory, ``/``-separated.
    - ``link``: the same as a relative URL from the page (``./a%20b/c.html``): each
      component percent-encoded, so any name is an inert path.
    - ``cwd``: the session's working directory, or None.
    - ``created`` / ``updated``: time stamps as recorded (ISO 8601, UTC), or ``""``.
    - ``models``: ``provider/model`` names in order of first use.
    - ``turns`` (user messages), ``tokens``, ``cost``: totals over the whole file, but
      for a session linked to the one it came from: its entries copied from that one
      are counted there, not here (each entry counted once over the page).
    - ``failed``: the last conversion of the session failed (the output listed is an
      earlier one).
    - ``key``: the session file's path below the input directory (``/``-separated):
      what ``parent`` names.
    - ``relation``: ``"fork"`` (its header names the session it was forked from),
      ``"subagent"`` (a pi-subagents run of another session), or None.
    - ``parent``: the ``key`` of that session, or None when it is not in the archive.
    - ``parent_title``: that session's title, or ``""``.
    - ``depth``: how many of its ancestors come before it on the page (its rows are
      placed right after its parent's, in the same project).
    - ``copied``: how many of its entries are its parent's, counted there.
    - ``days``: ``(day, tokens, cost)`` for each day (UTC) it has a counted entry on, its
      copies of its parent's entries left out: what the page's activity strip adds up.
    """

    project: str
    title: str
    file: str
    output: str
    link: str
    cwd: str | None
    created: str
    updated: str
    models: tuple[str, ...]
    turns: int
    tokens: int
    cost: float
    failed: bool
    key: str = ""
    relation: str | None = None
    parent: str | None = None
    parent_title: str = ""
    depth: int = 0
    copied: int = 0
    days: tuple[tuple[str, int, float], ...] = ()
