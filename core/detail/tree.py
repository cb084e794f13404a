"""Taking dropped entries out of the tree without breaking it.

An entry whose parent is dropped hangs from the nearest kept entry above it; the leaf
moves up the same way. References to a dropped entry follow as the harness would read
them: a compaction's first kept entry becomes the first entry kept after it on the
compaction's path (or the compaction itself: nothing before it kept), a summary's
``from`` entry the nearest kept one above it; a label or a context edit on a dropped
entry goes with it. Parent cycles, which a damaged file may hold, end the walk up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..ir import BranchSummary, Compaction, ContextEdit, Document, Entry, Label, MessageBody, SummaryMessage
from ..records import replace

Count = Callable[[str, Entry], None]


def prune(document: Document, kept: Sequence[Entry | None], count: Count) -> tuple[list[Entry], str | None]:
    """The entries to keep (``kept`` holds each entry of ``document`` as kept, or
    ``None`` when dropped) with their links mended, and the new leaf."""
    # An id whose entry in force (the last of its duplicates) is dropped is dropped
    # with all its duplicates: none of them may come back into force.
    winner = {e.id: i for i, e in enumerate(document.entries)}
    dropped = {
        entry.id for i, entry in enumerate(document.entries) if kept[i] is None and winner[entry.id] == i
    }
    if not dropped:
        return [e for e in kept if e is not None], document.leaf_id
    # A label or a context edit on a dropped entry says nothing any more.
    for i, entry in enumerate(kept):
        if entry is None or winner[entry.id] != i or entry.id in dropped:
            continue
        body = entry.body
        if type(body) in (Label, ContextEdit) and body.target_id in dropped:  # type: ignore[union-attr]
            count("label" if type(body) is Label else "context-edit", entry)
            dropped.add(entry.id)

    above: dict[str, str | None] = {}

    def kept_above(entry_id: str | None) -> str | None:
        """``entry_id`` when kept, else the nearest kept entry above it."""
        walked: list[str] = []
        seen: set[str] = set()
        cur = entry_id
        while cur is not None and cur in dropped:
            if cur in above:
                cur = above[cur]
                break
            if cur in seen:  # a parent cycle: nothing kept above
                cur = None
                break
            seen.add(cur)
            walked.append(cur)
            parent = document.get(cur)
            cur = parent.parent_id if parent is not None else None
        for step in walked:
            above[step] = cur
        return cur

    out: list[Entry] = []
    for entry in kept:
        if entry is None or entry.id in dropped:
            continue
        if entry.parent_id in dropped:
            entry = replace(entry, parent_id=kept_above(entry.parent_id))
        out.append(_mended(document, entry, dropped, kept_above))
    leaf = document.leaf_id
    return out, kept_above(leaf) if leaf is not None else None


def _mended(
    document: Document, entry: Entry, dropped: set[str], kept_above: Callable[[str | None], str | None]
) -> Entry:
    body = entry.body
    kind = type(body)
    if kind is Compaction and body.first_kept_id in dropped:  # type: ignore[union-attr]
        return replace(entry, body=replace(body, first_kept_id=_first_kept_after(document, entry, dropped)))
    if kind is BranchSummary and body.from_id in dropped:  # type: ignore[union-attr]
        return replace(entry, body=replace(body, from_id=kept_above(body.from_id)))  # type: ignore[union-attr]
    if kind is MessageBody:
        msg = body.message  # type: ignore[union-attr]
        if type(msg) is SummaryMessage and msg.from_id in dropped:
            return replace(entry, body=MessageBody(replace(msg, from_id=kept_above(msg.from_id))))
    return entry


def _first_kept_after(document: Document, compaction: Entry, dropped: set[str]) -> str:
    first = compaction.body.first_kept_id  # type: ignore[union-attr]
    ids: list[str] = []  # the compaction's path, from it up (a cycle ends it)
    cur: Entry | None = compaction
    while cur is not None and cur.id not in ids:
        ids.append(cur.id)
        cur = document.get(cur.parent_id) if cur.parent_id is not None else None
    ids.reverse()
    start = ids.index(first) if first in ids else len(ids)
    for entry_id in ids[start:]:
        if entry_id not in dropped:
            return entry_id
    return compaction.id
