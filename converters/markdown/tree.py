"""The session tree cut into segments for ``--all-branches``.

A segment is a chain of entries with no fork inside it. The *trunk* runs from the single
root to the first entry with more than one child (it is empty when the file has several
roots). Every child of a fork starts a branch segment; branches are numbered like
sections ("1", "1.2", "1.2.1") in depth-first order, children in source order, so the
same file always gives the same numbering.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from piconv.ir import Document, Entry, Text, UserMessage


@dataclass
class Segment:
    number: str  # "" for the trunk
    entries: list[Entry]
    parent: Segment | None = None
    children: list[Segment] = field(default_factory=list)

    @property
    def last(self) -> Entry | None:
        return self.entries[-1] if self.entries else None


def _chain(doc: Document, start: Entry) -> tuple[list[Entry], list[Entry]]:
    """Entries from ``start`` down to the first fork or leaf, and that point's children."""
    chain = [start]
    kids = doc.children(start.id)
    while len(kids) == 1:
        chain.append(kids[0])
        kids = doc.children(kids[0].id)
    return chain, kids


def segments(doc: Document) -> list[Segment]:
    """The trunk (possibly empty) followed by every branch, in output order."""
    roots = doc.roots()
    if len(roots) == 1:
        entries, forks = _chain(doc, roots[0])
        trunk = Segment("", entries)
    else:
        trunk, forks = Segment("", []), roots
    # Build the segment tree breadth-first (sessions can be deep: no recursion) ...
    todo: list[tuple[Segment, list[Entry], str]] = [(trunk, forks, "")]
    while todo:
        parent, kids, prefix = todo.pop()
        for i, kid in enumerate(kids, 1):
            number = f"{prefix}{i}"
            entries, grand = _chain(doc, kid)
            seg = Segment(number, entries, parent)
            parent.children.append(seg)
            todo.append((seg, grand, number + "."))
    # ... and list it depth-first, branch 1 and its sub-branches before branch 2.
    out: list[Segment] = []
    stack = [trunk]
    while stack:
        seg = stack.pop()
        out.append(seg)
        stack.extend(reversed(seg.children))
    return out


def first_user_text(entries: list[Entry]) -> str | None:
    for entry in entries:
        msg = entry.message
        if isinstance(msg, UserMessage):
            content = msg.content
            if isinstance(content, str) and content.strip():
                return content
            if isinstance(content, tuple):
                for part in content:
                    if isinstance(part, Text) and part.text and part.text.strip():
                        return part.text
    return None


def branch_title(seg: Segment, labels: dict[str, str]) -> str:
    """A branch is called by the first label on its entries, else by its first user text
    (looked for in the sub-branches too, first branch first)."""
    for entry in seg.entries:
        label = labels.get(entry.id)
        if label:
            return label
    todo = [seg]
    while todo:
        current = todo.pop(0)
        text = first_user_text(current.entries)
        if text:
            return text
        todo.extend(current.children)
    return "(no user message)"
