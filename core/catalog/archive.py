"""``piconv stats --archive``: the sessions an archive database holds, with the calls each
counts, read through the archive's format (``Archive.usage`` of ``sqlite``, found in the
registry as any format is), so a report comes from the database without reading a session."""

from __future__ import annotations

import json
from typing import Any

from ..errors import PluginError
from ..facts.spending import Spend
from ..facts.titles import shown_title
from .listing import Session

ARCHIVE_FORMAT = "sqlite"


def archived_sessions(path: str, fmt: str = ARCHIVE_FORMAT) -> list[Session]:
    """Each session of the archive at ``path`` (its file, or the directory holding it),
    its calls as the archive counted them (a fork's copies under its parent only). A call
    archived before piconv kept each call's split counts its total alone."""
    from ..api import get_format

    archive = get_format(fmt).archive
    reader = getattr(archive, "usage", None)
    if reader is None:
        raise PluginError(f"format {fmt!r} keeps no usage a report can read")
    out = []
    for row, calls in reader(path):
        spends = tuple(_spend(c) for c in calls)
        out.append(_session(row, spends))
    out.sort(key=lambda s: (s.updated or s.created or "", s.created or "", s.rel), reverse=True)
    return out


def _spend(call: tuple[Any, ...]) -> Spend:
    eid, stamp, kind, model, turns, i, o, r, w, tokens, cost, calls = call
    return Spend(
        str(eid),
        stamp,
        kind,
        model,
        turns,
        i or 0,
        o or 0,
        r or 0,
        w or 0,
        tokens or 0,
        float(cost or 0.0),
        calls,
    )


def _session(row: dict[str, Any], spends: tuple[Spend, ...]) -> Session:
    try:
        models = tuple(json.loads(row["models"])) if row.get("models") else ()
    except ValueError:
        models = ()
    title = shown_title(row.get("title"), (row.get("key") or "").rsplit("/", 1)[-1])
    return Session(
        path=row.get("source") or "",
        rel=row.get("key") or "",
        id=row.get("id"),
        reader=row.get("reader") or "",
        project=row.get("project") or "(no project)",
        cwd=row.get("cwd"),
        name=row.get("name"),
        first_prompt=None,
        title=title,
        created=row.get("created"),
        updated=row.get("updated"),
        models=models,
        relation=row.get("relation"),
        parent=row.get("parent"),
        copied=0,
        spends=spends,
        turns=row.get("turns") or 0,
        input=sum(s.input for s in spends),
        output=sum(s.output for s in spends),
        cache_read=sum(s.cache_read for s in spends),
        cache_write=sum(s.cache_write for s in spends),
        tokens=sum(s.tokens for s in spends),
        cost=round(sum(s.cost for s in spends), 10),
    )
