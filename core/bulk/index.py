"""The run's index pages: each format that declares one (``Converter.index``) writes its
own (``index.html`` for html, ``index.md`` for markdown) at the top of OUTDIR.

Built from the manifest alone (each record carries the facts the worker noted while the
session was in memory), so writing a page never re-reads a session. The core makes the
neutral list (:class:`piconv.facts.summary.ListedSession`, grouped by project) and writes the
bytes the format renders from it; it writes no HTML or Markdown itself.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..facts.summary import ListedSession
from ..facts.titles import project_name, shown_title
from ..records import replace
from .lineage import Link, Own, order, own_figures, resolve
from .worker import write_own

if TYPE_CHECKING:
    from .formats import RunFormat

RUN_FILES = frozenset({".piconv-manifest.jsonl", ".piconv-lock"})
"""The run's own files at the top of OUTDIR: no page takes their place."""


def _href(rel: str) -> str:
    # Each component percent-encoded with nothing kept: a name like "javascript:x" or
    # "?a#b" becomes an inert relative path; only the "/" between components survive.
    # The leading "./" makes that plain to any reader of the page, browser or human.
    # A name that is not UTF-8 is encoded back to its bytes, so the link finds the file.
    return "./" + "/".join(quote(os.fsencode(part), safe="") for part in rel.split("/"))


def listed_sessions(
    records: Iterable[dict[str, Any]], fmt: str, outdir: str, links: Mapping[str, Link] | None = None
) -> dict[str, list[ListedSession]]:
    """The sessions with an existing output in ``fmt``, grouped by project (sorted
    case-insensitively), each project's newest first, a session's forks and subagents
    right after it. ``links``: each session's parent (:func:`.lineage.resolve`), whose
    copies of its entries it does not count again."""
    every = {rec["input"]: rec for rec in records if isinstance(rec.get("input"), str)}
    links = links if links is not None else resolve(every)
    owned = own_figures(every, links)
    rows: dict[str, ListedSession] = {}
    for rel, rec in every.items():
        try:
            row = _listed(rec, fmt, outdir, owned.get(rel))
        except (TypeError, ValueError, OverflowError, AttributeError, UnicodeError):
            continue  # the manifest checks records on load; one that still fails costs its row only
        if row is not None:
            rows[rel] = row
    projects: dict[str, list[ListedSession]] = {}
    for row in rows.values():
        projects.setdefault(row.project, []).append(row)
    for name, group in projects.items():
        group.sort(key=lambda r: (r.created, r.file), reverse=True)  # newest first
        in_project = {r.key for r in group}
        placed = order([r.key for r in group], {k: v for k, v in links.items() if k in in_project})
        projects[name] = [
            _with_lineage(rows[key], depth, links.get(key), rows, every) for key, depth in placed
        ]
    return dict(sorted(projects.items(), key=lambda kv: (kv[0].casefold(), kv[0])))


def _with_lineage(
    row: ListedSession,
    depth: int,
    link: Link | None,
    rows: Mapping[str, ListedSession],
    records: Mapping[str, dict[str, Any]],
) -> ListedSession:
    if link is None:
        return row
    parent_title = ""
    if link.parent is not None:
        parent_row = rows.get(link.parent)
        parent_title = parent_row.title if parent_row is not None else _title(records.get(link.parent) or {})
    return replace(row, relation=link.relation, parent=link.parent, parent_title=parent_title, depth=depth)


def _title(rec: Mapping[str, Any]) -> str:
    meta = rec.get("meta") if isinstance(rec.get("meta"), dict) else {}
    title = meta.get("title") or meta.get("name") or meta.get("first_prompt")
    rel = rec.get("input")
    return shown_title(
        str(title) if title else None, rel.rsplit("/", 1)[-1] if isinstance(rel, str) else None
    )


def _listed(rec: dict[str, Any], fmt: str, outdir: str, own: Own | None = None) -> ListedSession | None:
    out = (rec.get("outputs") or {}).get(fmt)
    if not isinstance(out, dict) or not isinstance(out.get("path"), str):
        return None
    if not os.path.isfile(os.path.join(outdir, *out["path"].split("/"))):
        return None  # the user removed it: the index does not point at nothing
    meta = rec.get("meta") or {}
    rel = rec["input"]
    cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else None
    project = meta.get("project")
    if not isinstance(project, str):
        project = project_name(cwd, rel)
    return ListedSession(
        project=project,
        title=_title(rec),
        file=rel.rsplit("/", 1)[-1],
        output=out["path"],
        link=_href(out["path"]),
        cwd=cwd,
        created=str(meta.get("created") or ""),
        updated=str(meta.get("updated") or ""),
        models=tuple(str(m) for m in meta.get("models") or []),
        turns=own.turns if own is not None else int(meta.get("turns") or 0),
        tokens=own.tokens if own is not None else int(meta.get("tokens") or 0),
        cost=own.cost if own is not None else float(meta.get("cost") or 0.0),
        failed=rec.get("status") == "failed",
        key=rel,
        copied=own.copied if own is not None else 0,
        days=own.days if own is not None else _days(meta),
    )


def _days(meta: Mapping[str, Any]) -> tuple[tuple[str, int, float], ...]:
    """A session's days as the worker noted them; a session noted by an earlier piconv,
    which kept none, counts on the day it was last active."""
    from .lineage import noted_days, own_days

    days = own_days(noted_days(meta))
    if days or "days" in meta:
        return days
    day = str(meta.get("updated") or meta.get("created") or "")[:10]
    tokens, cost = meta.get("tokens"), meta.get("cost")
    if len(day) != 10:
        return ()
    return ((day, tokens if type(tokens) is int else 0, float(cost) if type(cost) in (int, float) else 0.0),)


class IndexNotWritten(Exception):
    """A page could not be written: its place holds a file piconv did not write, or the
    format's page is unusable (a name that is no plain file name, a render that failed)."""


def write_index(
    page: Any,
    fmt: str,
    records: Iterable[dict[str, Any]],
    outdir: str,
    replace_any: bool = False,
    links: Mapping[str, Link] | None = None,
) -> str:
    """Write ``page`` (format ``fmt``'s :class:`piconv.registry.IndexPage`); returns its
    path. Rewritten only when its bytes change, so a rerun with nothing new leaves it (and
    its mtime) alone. A file there that the format does not own raises
    :class:`IndexNotWritten` (unless ``replace_any``)."""
    name = page.file_name
    if not isinstance(name, str) or not _plain_name(name) or name in RUN_FILES:
        raise IndexNotWritten(
            f"format {fmt!r}: index page name {name!r} is not a file name of its own; not written"
        )
    path = os.path.join(outdir, name)
    projects: Mapping[str, Sequence[ListedSession]] = listed_sessions(records, fmt, outdir, links)
    try:
        data = page.render(projects, outdir)
        if not isinstance(data, bytes):
            raise TypeError(f"render returned {type(data).__name__}, not bytes")
    except Exception as exc:  # a plugin's page costs its page, never the run
        raise IndexNotWritten(
            f"{path}: format {fmt!r} could not render its index page: {type(exc).__name__}: {exc}"
        ) from exc
    if not write_own(path, data, outdir, lambda existing: _owns(page, existing), replace_any):
        raise IndexNotWritten(
            f"{path}: not written by piconv; left as it is (move it away, or use --overwrite)"
        )
    return path


def write_indexes(
    fmts: Sequence[RunFormat],
    records: Collection[dict[str, Any]],
    outdir: str,
    replace_any: bool,
    notes: list[str],
    links: Mapping[str, Link],
) -> list[str]:
    """Write the page of each format of the run that declares one; returns their paths.
    A page that cannot be written costs that page, with a note, never the run."""
    written = []
    for fmt in fmts:
        if fmt.index is not None:
            try:
                written.append(write_index(fmt.index, fmt.name, records, outdir, replace_any, links))
            except IndexNotWritten as exc:
                notes.append(str(exc))
    return written


def _owns(page: Any, existing: bytes) -> bool:
    try:
        return bool(page.owns(existing))
    except Exception:  # a plugin that cannot tell does not own it
        return False


def _plain_name(name: str) -> bool:
    return (
        name not in ("", ".", "..")
        and "\x00" not in name
        and not any(sep and sep in name for sep in (os.sep, os.altsep, "/"))
    )
