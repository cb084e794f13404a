"""``piconv inspect DIR``: the sessions of a directory as a directory run finds them, how
they are linked (forks, subagents), and their totals with every entry counted once.

Nothing is written: the sessions are the catalog's (:func:`.listing.sessions`, what
``piconv list`` shows: each read only as far as a list needs), so the links and figures
are those of the list, the index and the archive.
"""

from __future__ import annotations

from typing import Any

from .listing import Passed, sessions

_TOTALS = ("turns", "tokens", "cost", "copied_entries")


def survey(directory: str, recursive: bool = False) -> dict[str, Any]:
    """What ``directory`` holds: ``sessions`` (each with its link and its own figures),
    ``skipped`` (files that are not sessions), ``failed`` (sessions that could not be
    read), ``refused`` (links pointing outside) and ``totals`` over the sessions, each
    entry counted once."""
    catalog = sessions(directory, recursive=recursive, jobs=None)
    rows = [
        {
            "input": s.rel,
            "session_id": s.id,
            "reader": s.reader,
            "title": s.title,
            "created": s.created,
            "relation": s.relation,
            "parent": s.parent,
            "turns": s.turns,
            "tokens": s.tokens,
            "cost": s.cost,
            "copied_entries": s.copied,
        }
        for s in sorted(catalog, key=lambda s: s.rel)
    ]
    totals: dict[str, Any] = {"sessions": len(rows), **dict.fromkeys(_TOTALS, 0)}
    for row in rows:
        for name in _TOTALS:
            totals[name] += row[name]
    totals["cost"] = round(totals["cost"], 10)
    passed = catalog.passed
    return {
        "directory": directory,
        "sessions": rows,
        "skipped": [_passed(p) for p in passed if p.code != "failed" and not p.code.startswith("bulk:")],
        "failed": [{"input": p.rel, "message": p.message} for p in passed if p.code == "failed"],
        "refused": [_passed(p) for p in passed if p.code.startswith("bulk:")],
        "totals": totals,
    }


def _passed(item: Passed) -> dict[str, str]:
    return {"input": item.rel, "code": item.code, "message": item.message}


def render_survey(info: dict[str, Any]) -> str:
    """The survey for a terminal: a line per session (forks and subagents under their
    parent), then what was passed over, then the totals."""
    from ..bulk.lineage import Link, order
    from ..terminal import shown

    links = {
        s["input"]: Link(s["parent"], s["relation"]) for s in info["sessions"] if s["relation"] is not None
    }
    by_rel = {s["input"]: s for s in info["sessions"]}
    lines = [f"{'directory:':<16}{info['directory']}"]
    for rel, depth in order(sorted(by_rel), links):
        s = by_rel[rel]
        came = ""
        if s["relation"]:
            parent = s["parent"] or "a session not in this directory"
            came = f"  ({s['relation']} of {parent}"
            came += f"; {s['copied_entries']:,} copied entries counted there)" if s["copied_entries"] else ")"
        lines.append(
            f"{'  ' * (depth + 1)}{rel}: {s['turns']:,} turns, {s['tokens']:,} tokens, ${s['cost']:.4f}{came}"
        )
    for s in info["skipped"]:
        lines.append(f"skipped: {s['input']}: {s['message']}")
    for s in info["failed"] + info["refused"]:
        lines.append(f"not read: {s['input']}: {s['message']}")
    t = info["totals"]
    lines.append(
        f"{'totals:':<16}{t['sessions']:,} sessions, {t['turns']:,} turns, {t['tokens']:,} tokens, "
        f"${t['cost']:.4f} (each entry counted once: {t['copied_entries']:,} copies left to their parents)"
    )
    return "\n".join(shown(line) for line in lines) + "\n"
