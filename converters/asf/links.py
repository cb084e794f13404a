"""Ancestry queries in logarithmic time, for the checks a schema cannot say (a parent
before its children, ``first_kept`` on a compaction's path).

:class:`Ancestry` answers "is A on the path from B to its root?" with one jump pointer
per entry (Myers' skew-binary scheme): O(1) to add an entry, O(log depth) per question.
"""

from __future__ import annotations

__all__ = ["Ancestry"]


class Ancestry:
    """Entries added parent first; ``on_path(a, b)``: is ``a`` ``b`` or an ancestor of it?

    Each entry keeps ``(parent, depth, jump)``; ``jump`` skips up by the skew-binary
    rule, so a walk up to any depth takes O(log depth) steps. An entry whose parent is
    not (yet) an entry counts as a root here; ``orphans`` says whether any was added,
    so a caller that must follow such unknown parents knows to walk instead.
    """

    __slots__ = ("nodes", "orphans")

    def __init__(self) -> None:
        self.nodes: dict[str, tuple[str | None, int, str]] = {}
        self.orphans = False

    def __contains__(self, node: object) -> bool:
        return node in self.nodes

    def __len__(self) -> int:
        return len(self.nodes)

    def add(self, node: str, parent: str | None) -> None:
        nodes = self.nodes
        p = nodes.get(parent) if parent is not None else None  # type: ignore[arg-type]
        if p is None:
            if parent is not None:
                self.orphans = True
            nodes[node] = (parent, 0, node)
            return
        depth = p[1]
        jump = p[2]
        j = nodes[jump]
        jj = j[2]
        if depth - j[1] == j[1] - nodes[jj][1]:
            nodes[node] = (parent, depth + 1, jj)
        else:
            nodes[node] = (parent, depth + 1, parent)  # type: ignore[arg-type]

    def on_path(self, a: str, b: str | None) -> bool:
        nodes = self.nodes
        if b is None:
            return False
        n = nodes.get(b)
        na = nodes.get(a)
        if n is None or na is None:
            return a == b
        target = na[1]
        v = b
        while n[1] > target:
            j = n[2]
            v = j if nodes[j][1] >= target else n[0]  # type: ignore[assignment]
            n = nodes[v]
        return v == a
