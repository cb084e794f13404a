"""The session tree cut into segments for ``--all-branches``.

A segment is a chain of entries with no fork inside it. The *trunk* runs from the single
root to the first entry with more than one child (it is empty when the file has several
roots). Every child of a fork starts a branch segment; branches are numbered 1, 2, 3 …
in depth-first order, children in source order, so the same file always gives the same
numbering (a flat number: a nested "1.2.1" grows with the depth, and a deep tree would
make headings as long as the tree is deep).
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
    # Build the segment tree (sessions can be deep: no recursion) ...
    todo: list[tuple[Segment, list[Entry]]] = [(trunk, forks)]
    while todo:
        parent, kids = todo.pop()
        for kid in kids:
            entries, grand = _chain(doc, kid)
            seg = Segment("", entries, parent)
            parent.children.append(seg)
            todo.append((seg, grand))
    # ... and list it depth-first, branch 1 and its sub-branches before branch 2.
    out: list[Segment] = []
    stack = [trunk]
    while stack:
        seg = stack.pop()
        if seg is not trunk:
            seg.number = str(len(out))  # the trunk is out[0]
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


def branch_titles(segs: list[Segment], labels: dict[str, str]) -> dict[int, str]:
    """Each branch's title by ``id()`` of its segment: the first label on its entries,
    else the first user text in it or, failing that, in its sub-branches (depth first,
    branch 1 and its sub-branches before branch 2). One pass from the last segment
    back, so the time is linear in the size of the tree."""
    text_below: dict[int, str | None] = {}  # the first user text in a segment's subtree
    for seg in reversed(segs):  # children come after their parent in ``segs``
        text = first_user_text(seg.entries)
        if text is None:
            for child in seg.children:
                text = text_below[id(child)]
                if text is not None:
                    break
        text_below[id(seg)] = text
    titles = {}
    for seg in segs:
        label = next((lab for e in seg.entries if (lab := labels.get(e.id))), None)
        titles[id(seg)] = label or text_below[id(seg)] or "(no user message)"
    return titles
