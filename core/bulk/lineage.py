"""Which session a session came from: a fork to the session its header names, a subagent's
session to the session that ran it; and what a total must not count twice.

pi's ``/fork`` and ``/clone`` write a new file whose header names the file it came from
(``parentSession``, a path) and copy that session's entries into it, ids and time stamps
included; pi-subagents keeps a subagent's session below its parent's
(``STEM/RUN/run-N/*.jsonl`` beside ``STEM.jsonl``) or its run's events in the project's
``subagent-artifacts/RUNID_AGENT.jsonl``, the run id being in the parent's tool result.
Everything here is decided from what the manifest records of each session (its header,
and the facts the worker noted: :func:`piconv.facts.lineage.lineage_facts`), so it never reads a
session again.

A fork's entries copied from its parent are counted once, under the parent: a fork's own
figures leave out each of its copies whose key (id and time stamp) its parent holds. Two
sessions that are not linked are never compared, so sharing an entry id merges nothing.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .discover import PIPED_SUBAGENTS
from .select import project_folder

FORK = "fork"
SUBAGENT = "subagent"
_RUN_DIR = re.compile(r"^run-[0-9]+$")
_PI_NAME = re.compile(r"^[0-9T:.Z-]+_(.+)\.jsonl$")


@dataclass(frozen=True, slots=True)
class Link:
    """``parent``: the input (relative path) of the session it came from, or None when
    that session is not in the archive; ``relation``: :data:`FORK` or :data:`SUBAGENT`."""

    parent: str | None
    relation: str


@dataclass(frozen=True, slots=True)
class Own:
    """A session's own turns, tokens and cost: what its copies of its parent's entries
    (``copied`` of them) leave once taken out; ``days``: its own ``(day, tokens, cost)``
    for each day it has an entry of its own on (:func:`piconv.facts.summary.activity_facts`)."""

    turns: int
    tokens: int
    cost: float
    copied: int = 0
    days: tuple[tuple[str, int, float], ...] = ()


def _meta(rec: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = rec.get("meta")
    return meta if isinstance(meta, dict) else {}


def _header(rec: Mapping[str, Any]) -> Mapping[str, Any]:
    header = rec.get("header")
    return header if isinstance(header, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def parent_path(rec: Mapping[str, Any]) -> str | None:
    """The path of the session ``rec``'s header names as its parent (the manifest's
    ``header``, kept when the file was read; else the facts)."""
    return _text(_header(rec).get("parent_session")) or _text(_meta(rec).get("parent_session"))


def session_id(rec: Mapping[str, Any]) -> str | None:
    return _text(_header(rec).get("id")) or _text(_meta(rec).get("id"))


def resolve(records: Mapping[str, Mapping[str, Any]], root: str | None = None) -> dict[str, Link]:
    """Each session's link, by input (relative path), for the sessions that have one.
    ``root``: the input directory, to find a parent by the absolute path its fork's
    header names. A link that would close a cycle is dropped."""
    if not any(parent_path(rec) or _in_subagent_layout(rel) for rel, rec in records.items()):
        return {}  # no fork, no subagent: nothing to link (most archives, every rerun of them)
    by_path: dict[str, str] = {}
    by_id: dict[str, list[str]] = {}
    by_name: dict[str, list[str]] = {}
    runs: dict[tuple[str, str], list[str]] = {}
    for rel in sorted(records):
        rec = records[rel]
        if root is not None:
            by_path[os.path.normpath(os.path.join(root, *rel.split("/")))] = rel
        sid = session_id(rec)
        if sid:
            by_id.setdefault(sid, []).append(rel)
        by_name.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
        for run in _meta(rec).get("subagent_runs") or ():
            if isinstance(run, str):
                runs.setdefault((project_folder(rel), run), []).append(rel)
    links: dict[str, Link] = {}
    for rel in sorted(records):
        link = _link(rel, records, by_path, by_id, by_name, runs)
        if link is not None:
            links[rel] = link
    return _without_cycles(links)


def _in_subagent_layout(rel: str) -> bool:
    parts = rel.split("/")
    return (len(parts) >= 2 and parts[-2] == PIPED_SUBAGENTS) or (
        len(parts) >= 4 and _RUN_DIR.match(parts[-2]) is not None
    )


def _link(
    rel: str,
    records: Mapping[str, Mapping[str, Any]],
    by_path: Mapping[str, str],
    by_id: Mapping[str, list[str]],
    by_name: Mapping[str, list[str]],
    runs: Mapping[tuple[str, str], list[str]],
) -> Link | None:
    parts = rel.split("/")
    forked_from = parent_path(records[rel])
    if len(parts) >= 4 and _RUN_DIR.match(parts[-2]):
        # [PROJECT/]STEM/RUN/run-N/FILE: the session STEM.jsonl beside STEM ran it
        stem = "/".join(parts[:-3]) + ".jsonl"
        return Link(
            stem if stem in records else _by_path(forked_from, rel, by_path, by_id, by_name), SUBAGENT
        )
    if len(parts) >= 2 and parts[-2] == PIPED_SUBAGENTS:
        # [PROJECT/]subagent-artifacts/RUNID_AGENT[_N].jsonl: the session whose tool result
        # names the run, in the same project; else the session the header names
        run = parts[-1].split("_", 1)[0]
        owners = [r for r in runs.get((project_folder(rel), run), ()) if r != rel]
        parent = owners[0] if owners else _by_path(forked_from, rel, by_path, by_id, by_name)
        return Link(parent, SUBAGENT)
    if forked_from:
        return Link(_by_path(forked_from, rel, by_path, by_id, by_name), FORK)
    return None


def _by_path(
    path: str | None,
    rel: str,
    by_path: Mapping[str, str],
    by_id: Mapping[str, list[str]],
    by_name: Mapping[str, list[str]],
) -> str | None:
    """The input a header's ``parentSession`` names: the file at that path in the input
    directory, else the session whose id the path's pi file name carries
    (``…_<id>.jsonl``: the archive may have been copied elsewhere), else the one file of
    that name."""
    if not path:
        return None
    found = by_path.get(os.path.normpath(path))
    if found is not None and found != rel:
        return found
    name = posixpath.basename(path.replace("\\", "/"))
    match = _PI_NAME.match(name)
    if match:
        for candidate in by_id.get(match.group(1), ()):
            if candidate != rel:
                return candidate
    same = [r for r in by_name.get(name, ()) if r != rel]
    return same[0] if len(same) == 1 else None


def _without_cycles(links: dict[str, Link]) -> dict[str, Link]:
    """``links`` without those that would make a session its own ancestor (each dropped
    link is the one met last, in path order)."""
    kept: dict[str, Link] = {}
    for rel in sorted(links):
        parent = links[rel].parent
        seen = {rel}
        while parent is not None and parent not in seen:
            seen.add(parent)
            parent = kept[parent].parent if parent in kept else None
        kept[rel] = links[rel] if parent is None else Link(None, links[rel].relation)
    return kept


def own(rec: Mapping[str, Any], parent: Mapping[str, Any] | None) -> Own:
    """``rec``'s own figures: its totals less its copies of entries ``parent`` holds."""
    meta = _meta(rec)
    turns, tokens, cost = _int(meta.get("turns")), _int(meta.get("tokens")), _float(meta.get("cost"))
    days = noted_days(meta)
    copied = meta.get("copied")
    if parent is None or not isinstance(copied, list) or not copied:
        return Own(turns, tokens, cost, 0, own_days(days))
    keys = _keys(_meta(parent).get("counted"))
    n = 0
    for item in copied:
        if isinstance(item, list) and len(item) in (4, 5) and item[0] in keys:
            n += 1
            turns -= _int(item[1])
            tokens -= _int(item[2])
            cost -= _float(item[3])
            day = days.get(item[4]) if len(item) == 5 and isinstance(item[4], str) else None
            if day is not None:
                day[0] -= 1
                day[1] -= _int(item[2])
                day[2] -= _float(item[3])
    return Own(max(turns, 0), max(tokens, 0), max(round(cost, 10), 0.0), n, own_days(days))


def noted_days(meta: Mapping[str, Any]) -> dict[str, list[Any]]:
    """The manifest's ``days`` (:func:`piconv.facts.summary.activity_facts`) as mutable figures."""
    value = meta.get("days")
    if not isinstance(value, dict):
        return {}
    return {
        day: [_int(v[0]), _int(v[1]), _float(v[2])]
        for day, v in value.items()
        if isinstance(day, str) and isinstance(v, list) and len(v) == 3
    }


def own_days(days: Mapping[str, list[Any]]) -> tuple[tuple[str, int, float], ...]:
    return tuple((day, max(t, 0), max(round(c, 10), 0.0)) for day, (n, t, c) in sorted(days.items()) if n > 0)


def own_figures(records: Mapping[str, Mapping[str, Any]], links: Mapping[str, Link]) -> dict[str, Own]:
    """:func:`own` of every session that has a parent in ``records``."""
    return {
        rel: own(records[rel], records[link.parent])
        for rel, link in links.items()
        if rel in records and link.parent is not None and link.parent in records
    }


def _keys(value: Any) -> frozenset[str]:
    if not isinstance(value, str):
        return frozenset()
    from ..facts.lineage import KEY_BYTES

    width = (KEY_BYTES * 4 + 2) // 3
    return frozenset(value[i : i + width] for i in range(0, len(value), width))


def _int(value: Any) -> int:
    return value if type(value) is int else 0


def _float(value: Any) -> float:
    return float(value) if type(value) in (int, float) else 0.0


def order(rels: Iterable[str], links: Mapping[str, Link]) -> list[tuple[str, int]]:
    """``rels`` (already in the order wanted) with each session's children right after
    it, deepest last, and each one's depth below a parent also in ``rels``."""
    wanted = list(rels)
    present = set(wanted)
    children: dict[str, list[str]] = {}
    roots = []
    for rel in wanted:
        link = links.get(rel)
        if link is not None and link.parent in present and link.parent != rel:
            children.setdefault(link.parent, []).append(rel)
        else:
            roots.append(rel)
    out: list[tuple[str, int]] = []

    def visit(rel: str, depth: int) -> None:
        out.append((rel, depth))
        for child in children.get(rel, ()):
            visit(child, depth + 1)

    for rel in roots:
        visit(rel, 0)
    return out
