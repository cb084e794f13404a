"""Which branch was continued at each fork, as agentsession's ``export`` decides it.

At an entry with several children, the child whose subtree holds the entry appended last
(in file order) was continued and the others abandoned. A trajectory on the continued side
of a fork lists the leaves of the abandoned subtrees (``preferred_over``); one that left
the continued route names the first fork where it did (``abandoned_at``; none when that
fork is above several roots, where pi's branch back to the start leaves a tree). The session's
current leaf, the last entry of the file, is on the continued side of every fork.
"""

from __future__ import annotations

import re

from piconv.ir import Document

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


class Forks:
    """The tree's forks and their continued children, worked out once per document."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.latest: dict[str, int] = {}
        self.leaves_under: dict[str, list[str]] = {}
        if not doc.branch_points() and len(doc.roots()) < 2:
            return  # one path: nothing to prefer (most sessions)
        order = {entry.id: n for n, entry in enumerate(doc.entries)}
        for entry, _depth in reversed(list(doc.walk())):  # children before their parent
            children = doc.children(entry.id)
            self.latest[entry.id] = max([order[entry.id], *(self.latest[c.id] for c in children)])
            self.leaves_under[entry.id] = (
                [leaf for c in children for leaf in self.leaves_under[c.id]] if children else [entry.id]
            )

    def marks(self, leaf_id: str) -> tuple[list[str], str | None, bool]:
        """(the leaves this path was continued in preference to, the fork entry where it
        was abandoned or None, whether it is the continued path at every fork). Several
        roots count as a fork above them: pi's branch back to the start makes a new root."""
        preferred_over: list[str] = []
        abandoned_at: str | None = None
        preferred = True
        path = self.doc.path(leaf_id)
        parents: list[str | None] = [None, *(entry.id for entry in path[:-1])]
        for parent, following in zip(parents, path, strict=True):
            children = self.doc.children(parent)
            if len(children) < 2:
                continue
            continued = max(children, key=lambda c: self.latest[c.id])
            if continued.id == following.id:
                for child in children:
                    if child.id != continued.id:
                        preferred_over.extend(self.leaves_under[child.id])
            elif preferred:
                preferred = False
                abandoned_at = parent
        return preferred_over, abandoned_at, preferred


def safe_name(text: str) -> str:
    """``text`` as part of a file name: every character but letters, digits, ``.``, ``_``
    and ``-`` made a ``-`` (agentsession's rule), never empty, never a dot name."""
    name = _UNSAFE.sub("-", text)[:120]
    return name if name.strip(".") else "session"


def document_name(session_id: str | None, leaf_id: str, current: bool) -> str:
    """``<session-id>.json`` for the current leaf's trajectory, ``<session-id>_<leaf-id>.json``
    for the others."""
    base = safe_name(session_id or "session")
    return f"{base}.json" if current else f"{base}_{safe_name(leaf_id)}.json"
