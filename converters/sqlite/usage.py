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
    "SELECT session, id, timestamp, kind, role, model, input_tokens, output_tokens, cache_read_tokens, "
    "cache_write_tokens, tokens, cost FROM entries INDEXED BY entries_usage "
    "WHERE tokens IS NOT NULL AND inherited = 0"
)
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


def usage(path: str) -> list[tuple[dict[str, Any], list[tuple[Any, ...]]]]:
    """Every session of the archive at ``path`` (the file, or the directory holding it):
    its row (:data:`SESSION_FIELDS`) and its calls, each ``(entry_id, timestamp, kind,
    model, turns, input, output, cache_read, cache_write, tokens, cost)`` (the order of
    :class:`piconv.facts.Spend`); ``kind`` is ``assistant``, ``tool``, ``compaction``,
    ``branch_summary`` or ``usage``. A call archived before the split was kept has its four
    counts None."""
    conn = _open(archive_path(path))
    try:
        sessions = {
            row[0]: (dict(zip(SESSION_FIELDS, row[1:], strict=True)), []) for row in conn.execute(_SESSIONS)
        }
        for pk, eid, stamp, kind, role, model, i, o, r, w, tokens, cost in conn.execute(_CALLS):
            found = sessions.get(pk)
            if found is None:
                continue
            if kind == "message":
                kind = "assistant" if role == "assistant" else "tool"
            found[1].append(
                (
                    eid,
                    stamp,
                    kind,
                    model if kind in ("assistant", "usage") else None,
                    0,
                    i,
                    o,
                    r,
                    w,
                    tokens,
                    cost or 0.0,
                )
            )
    finally:
        conn.close()
    return list(sessions.values())
