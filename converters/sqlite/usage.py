"""What ``piconv stats --archive`` reads of an archive: each session's row and the calls
it counts, each a fork copied counted once (``inherited`` entries left out), from the
``entries_usage`` index alone (schema 6)."""

from __future__ import annotations

from typing import Any

from .search import _open, archive_path

_SESSIONS = (
    "SELECT pk, key, id, project, cwd, title, name, created, updated, models, turns, source, reader, "
    "relation, parent FROM sessions"
)
_CALLS = (
    "SELECT session, min(id), substr(timestamp, 1, ?) AS at, kind, role = 'assistant', model, "
    "sum(input_tokens), sum(output_tokens), sum(cache_read_tokens), sum(cache_write_tokens), sum(tokens), "
    "sum(cost), count(*) FROM entries INDEXED BY entries_usage "
    "WHERE tokens IS NOT NULL AND inherited = 0 GROUP BY session, at, kind, role = 'assistant', model"
)
MINUTE = 16
"""Calls of one session, minute, kind and model come summed: a report's days, in any zone,
are made of minutes (a zone's offset is whole minutes)."""
SESSION_FIELDS = (
    "key",
    "id",
    "project",
    "cwd",
    "title",
    "name",
    "created",
    "updated",
    "models",
    "turns",
    "source",
    "reader",
    "relation",
    "parent",
)


def usage(path: str, grain: int = MINUTE) -> list[tuple[dict[str, Any], list[tuple[Any, ...]]]]:
    """Every session of the archive at ``path`` (the file, or the directory holding it):
    its row (:data:`SESSION_FIELDS`) and its calls, each ``(entry_id, timestamp, kind,
    model, turns, input, output, cache_read, cache_write, tokens, cost, calls)`` (the order
    of :class:`piconv.facts.Spend`); ``kind`` is ``assistant``, ``tool``, ``compaction``,
    ``branch_summary`` or ``usage``. Calls of one session, kind and model whose time stamps
    share their first ``grain`` characters come summed (``calls`` of them; ``entry_id`` the
    least of their ids, ``timestamp`` that prefix). A call archived before the split was
    kept has its four counts None."""
    conn = _open(archive_path(path))
    try:
        sessions = {
            row[0]: (dict(zip(SESSION_FIELDS, row[1:], strict=True)), []) for row in conn.execute(_SESSIONS)
        }
        for pk, eid, stamp, kind, assistant, model, i, o, r, w, tokens, cost, calls in conn.execute(
            _CALLS, [grain]
        ):
            found = sessions.get(pk)
            if found is None:
                continue
            if kind == "message":
                kind = "assistant" if assistant else "tool"
            named = model if kind in ("assistant", "usage") else None
            found[1].append((eid, stamp, kind, named, 0, i, o, r, w, tokens, cost or 0.0, calls))
    finally:
        conn.close()
    return list(sessions.values())
