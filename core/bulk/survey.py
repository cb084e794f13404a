"""``piconv inspect DIR``: the sessions of a directory as a directory run finds them, how
they are linked (forks, subagents), and their totals with every entry counted once.

Nothing is written: each session is read once, its facts noted (as a directory run notes
them in its manifest), and the links and totals are made from those facts, by the same
code that makes the archive's index (:mod:`.lineage`).
"""

from __future__ import annotations

import os
from typing import Any

from .discover import NamedBytes, Refused, Skipped, discover, open_session
from .lineage import own_figures, resolve
from .sniff import sniff


def survey(directory: str, recursive: bool = False) -> dict[str, Any]:
    """What ``directory`` holds: ``sessions`` (each with its link and its own figures),
    ``skipped`` (files that are not sessions), ``failed`` (sessions that could not be
    read), ``refused`` (links pointing outside) and ``totals`` over the sessions, each
    entry counted once."""
    from .. import api
    from ..errors import PiconvError
    from ..facts.lineage import lineage_facts
    from ..facts.summary import session_facts

    root = os.path.realpath(directory)
    sources, refused, skipped = discover(root, recursive=recursive)
    records: dict[str, dict[str, Any]] = {}
    failed = []
    for src in sources:
        header = sniff(root, src)
        if isinstance(header, Skipped):
            skipped.append(header)
            continue
        if isinstance(header, Refused):
            refused.append(header)
            continue
        try:
            with open_session(root, src.open_rel or src.rel) as fh:
                data = fh.read()
            doc, reader = api.load_detected(NamedBytes(data, src.path))
        except (PiconvError, OSError) as exc:
            failed.append({"input": src.rel, "message": str(exc)})
            continue
        records[src.rel] = {
            "input": src.rel,
            "header": header.to_json(),
            "reader": reader.name,
            "meta": {**session_facts(doc, src.path), **lineage_facts(doc)},
        }
    links = resolve(records, root)
    owned = own_figures(records, links)
    sessions = []
    totals = {"sessions": 0, "turns": 0, "tokens": 0, "cost": 0.0, "copied_entries": 0}
    for rel, rec in records.items():
        meta = rec["meta"]
        link = links.get(rel)
        own = owned.get(rel)
        row = {
            "input": rel,
            "session_id": meta.get("id"),
            "reader": rec["reader"],
            "title": meta.get("title"),
            "created": meta.get("created"),
            "relation": link.relation if link else None,
            "parent": link.parent if link else None,
            "turns": own.turns if own else meta["turns"],
            "tokens": own.tokens if own else meta["tokens"],
            "cost": own.cost if own else meta["cost"],
            "copied_entries": own.copied if own else 0,
            "file_tokens": meta["tokens"],
            "file_cost": meta["cost"],
        }
        sessions.append(row)
        totals["sessions"] += 1
        for name in ("turns", "tokens", "cost", "copied_entries"):
            totals[name] += row[name]
    totals["cost"] = round(totals["cost"], 10)
    return {
        "directory": directory,
        "sessions": sessions,
        "skipped": [
            {"input": s.rel, "code": s.code, "message": s.message} for s in sorted(skipped, key=_rel)
        ],
        "failed": failed,
        "refused": [{"input": r.rel, "code": r.code, "message": r.message} for r in refused],
        "totals": totals,
    }


def _rel(item: Skipped) -> str:
    return item.rel


def render_survey(info: dict[str, Any]) -> str:
    """The survey for a terminal: a line per session (forks and subagents under their
    parent), then what was passed over, then the totals."""
    from ..terminal import shown
    from .lineage import Link, order

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
