"""The archive formats of a directory run: one file for every session (``Converter.archive``).

The parent process alone opens each archive (before planning, so a session missing from
it, say after a damaged database was rebuilt, is converted again) and closes it at the
end, writing the files the format keeps beside it (the datasette metadata of ``sqlite``).
In between, the local executor's workers put their sessions in themselves (the format's
``put``), so the writing runs beside the converting instead of after it in one process;
a Dask worker, which may be on another machine, sends the session's payload and the
parent puts it in as its result arrives.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from .manifest import Manifest, output_links
from .summary import Summary
from .worker import write_own


def open_stores(fmts: list[Any], outdir: str, summary: Summary) -> dict[str, Any]:
    """Each archive format's store, opened; what opening had to do goes to the summary."""
    stores: dict[str, Any] = {}
    try:
        for fmt in fmts:
            if fmt.archive is not None:
                store = fmt.archive.open(os.path.join(outdir, fmt.archive.file_name))
                stores[fmt.name] = store
                summary.notes.extend(store.notes)
    except BaseException:
        close_stores(stores, outdir, failed=True)
        raise
    return stores


def idle_stores(stores: Mapping[str, Any]) -> None:
    """Let each store close what it holds open while the tasks run (``idle``, optional):
    a pool worker forked from this process then inherits no open database."""
    for store in stores.values():
        idle = getattr(store, "idle", None)
        if idle is not None:
            idle()


def archive_result(
    result: dict[str, Any], stores: Mapping[str, Any], fmts: list[Any], manifest: Manifest
) -> None:
    """Put the session's payloads in their archives. A failure costs that format of
    that session (recorded as its error), never the run."""
    payloads = result.pop("payloads", None) or {}
    if not payloads:
        return
    rel = result["input"]
    links = {**output_links(manifest.get(rel)), **result["outputs"]}
    for name, payload in payloads.items():
        try:
            stores[name].add(result.get("key") or rel, payload, result.get("sha256"), links)
        except Exception as exc:  # a database error costs this session's row, not the run
            result["outputs"].pop(name, None)
            result["errors"][name] = {"code": "bulk:archive-error", "message": f"{type(exc).__name__}: {exc}"}
            result["status"] = "failed"


def release_archives(fmts: list[Any]) -> None:
    """Close this process's own connections to the archives (the tasks ``--jobs 1`` ran
    here), so the stores can close theirs and fold their files up."""
    for fmt in fmts:
        release = getattr(fmt.archive, "release", None)
        if release is not None:
            release()


def link_stores(
    stores: Mapping[str, Any],
    records: Mapping[str, Mapping[str, Any]],
    links: Mapping[str, Any],
    notes: list[str],
    key_of: Callable[[str], str] = str,
) -> None:
    """Tell each store (its ``link``, optional) which session came from which: every
    session in the archive with its parent's key (or None) and the relation, so the
    archive shows the link and counts a fork's copies of its parent's entries once. A
    store that fails at it keeps its sessions as they were, with a note. ``key_of``: a
    session's key in the archive from its input's path."""
    wanted = {
        key_of(rel): (key_of(link.parent) if link.parent is not None else None, link.relation)
        for rel, link in links.items()
        if rel in records
    }
    for name, store in stores.items():
        link = getattr(store, "link", None)
        if link is None:
            continue
        try:
            link(wanted)
        except Exception as exc:  # the archive as it was is still whole
            notes.append(
                f"{name}: could not link forks and subagents to their sessions: {type(exc).__name__}: {exc}"
            )


def close_stores(
    stores: dict[str, Any],
    outdir: str,
    failed: bool = False,
    replace_any: bool = False,
    notes: list[str] | None = None,
) -> list[str]:
    """Close every store still open (and forget it); write the files each keeps beside
    itself unless the run ``failed``. Returns the archives' paths. A file already at
    such a place is replaced only when it is the store's own (``owns``, optional) or
    ``replace_any`` (``--overwrite``); else it stays, with a note."""
    written = []
    while stores:
        _name, store = stores.popitem()
        extra = store.close()
        written.append(store.path)
        if notes is not None:
            notes.extend(getattr(store, "late_notes", None) or ())
        if failed:
            continue
        owns = getattr(store, "owns", None) or (lambda existing: False)
        for file_name, data in (extra or {}).items():
            path = os.path.join(outdir, file_name)
            if not write_own(path, data, outdir, owns, replace_any) and notes is not None:
                notes.append(
                    f"{path}: not written by piconv; left as it is (move it away, or use --overwrite)"
                )
    return written
