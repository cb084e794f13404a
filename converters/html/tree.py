"""The conversation tree as nested HTML: every branch present, the leaf path open.

A run of entries with one child each is drawn in sequence. At a branch point every child
starts a ``<details class="branch">``; the one on the path to the document's leaf is
``open``, the others are one click away, without JavaScript. Branch nesting deeper than
``MAX_NESTING`` is not nested further (browsers cap element depth and flatten deeper
markup): such a branch is drawn after the main tree, at the top level, and linked from
its branch point. Entries are visited iteratively inside a run, so long sessions do not
recurse.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from piconv.ir import AssistantMessage, Document, Entry, MessageBody, Text, UserMessage

from .blocks import content_text
from .escape import anchor
from .escape import text as esc

MAX_NESTING = 40


def branch_anchor(entry_id: str) -> str:
    return "b" + anchor(entry_id)[1:]


def child_map(doc: Document) -> dict[str | None, list[Entry]]:
    """Children by parent id, built once (``Document.children`` builds a new list per
    call, which adds up over tens of thousands of entries)."""
    kids: dict[str | None, list[Entry]] = {}
    last = {e.id: e for e in doc.entries}  # the last of duplicated ids wins, as in the document
    for e in doc.entries:
        if last[e.id] is e:
            kids.setdefault(e.parent_id, []).append(e)
    return kids


def subtree_sizes(kids: dict[str | None, list[Entry]]) -> dict[str, int]:
    """Entries in each subtree reachable from the roots (iterative: no recursion limit)."""
    order: list[Entry] = []
    stack = list(kids.get(None, ()))
    seen: set[str] = set()
    while stack:
        e = stack.pop()
        if e.id in seen:
            continue
        seen.add(e.id)
        order.append(e)
        stack.extend(kids.get(e.id, ()))
    sizes = dict.fromkeys(seen, 1)
    for e in reversed(order):  # children before parents: add each subtree to its parent
        if e.parent_id is not None:
            sizes[e.parent_id] += sizes[e.id]
    return sizes


def preview(doc: Document, entry: Entry, limit: int = 30) -> str:
    """A short text to name a branch: the first user (else assistant) text within the
    first ``limit`` entries of the run starting at ``entry``."""
    cur: Entry | None = entry
    fallback = ""
    for _ in range(limit):
        if cur is None:
            break
        msg = cur.body.message if isinstance(cur.body, MessageBody) else None
        if isinstance(msg, UserMessage):
            t = content_text(msg.content)
            first = _VISIBLE.search(t)
            if first is not None:
                # what _short keeps of the stripped text, without that copy of a huge one
                return _short(t[first.start() : first.start() + 4 * 90])
        elif isinstance(msg, AssistantMessage) and not fallback:
            fallback = " ".join(
                p.text for p in msg.content or () if isinstance(p, Text) and isinstance(p.text, str)
            ).strip()
        kids = doc.children(cur.id)  # a few entries per branch: the list cost is small
        cur = kids[0] if len(kids) == 1 else None
    return _short(fallback) if fallback else cur.kind if cur is not None else entry.kind


_VISIBLE = re.compile(r"\S")  # (a character str.strip() would keep)


def _short(s: str, n: int = 90) -> str:
    s = " ".join(s[: n * 4].split())  # a prefix only: a huge message costs what a small one does
    return s if len(s) <= n else s[: n - 3] + "..."


class TreeWriter:
    """Emits the tree through ``emit`` (page chunks), drawing entries with ``draw``
    (page.py passes the entry itself through, to lay the page out before drawing it)."""

    def __init__(
        self,
        doc: Document,
        draw: Callable[[Entry], Any],
        emit: Callable[[Any], None],
        leaf_id: str | None = None,
    ) -> None:
        self.doc = doc
        self.draw = draw
        self.emit = emit
        leaf = leaf_id if leaf_id is not None else doc.leaf_id
        self.on_path = {e.id for e in doc.path(leaf)} if leaf is not None and leaf in doc else set()
        self.kids = child_map(doc)
        self.sizes = subtree_sizes(self.kids)
        self.deferred: list[tuple[Entry, int, int, Entry | None]] = []
        # Guards against parent cycles and self-parented entries, which would loop.
        self.seen: set[str] = set()

    def write(self) -> None:
        roots = self.kids.get(None, [])
        if len(roots) == 1:
            self._run(roots[0], 0)
        elif roots:
            self._branches(None, roots, 0)
        # Branches cut off by the nesting cap, drawn at the top level (they may defer more).
        while self.deferred:
            entry, i, n, parent = self.deferred.pop(0)
            self._branch(entry, i, n, parent, 0, detached=True)
        # Entries no root leads to (a parent cycle): shown in file order, nothing lost.
        rest = [e for e in self.doc.entries if e.id not in self.seen and self.doc.get(e.id) is e]
        if rest:
            self.emit(
                '<section class="unreachable"><h2>Entries not reachable from the start</h2>'
                '<p class="note">Their parent links form a cycle or lead nowhere; shown in file order.</p>'
            )
            for e in rest:
                self.seen.add(e.id)
                self.emit(self.draw(e))
            self.emit("</section>")

    def _run(self, entry: Entry, depth: int) -> None:
        cur = entry
        while True:
            self.seen.add(cur.id)
            self.emit(self.draw(cur))
            kids = self.kids.get(cur.id, ())
            if kids and any(k.id in self.seen for k in kids):
                kids = [k for k in kids if k.id not in self.seen]
            if not kids:
                return
            if len(kids) == 1:
                cur = kids[0]
                continue
            self._branches(cur, kids, depth)
            return

    def _branches(self, parent: Entry | None, kids: list[Entry], depth: int) -> None:
        where = "at the start" if parent is None else f'after <a href="#{anchor(parent.id)}">this entry</a>'
        self.emit(f'<div class="branches"><p class="branches-head">{len(kids)} branches {where}</p>')
        for i, kid in enumerate(kids, 1):
            if depth + 1 > MAX_NESTING:
                self.deferred.append((kid, i, len(kids), parent))
                self.emit(
                    f'<p class="branch-link"><a href="#{branch_anchor(kid.id)}">Branch {i} of {len(kids)}: '
                    f"{esc(preview(self.doc, kid))}</a> (drawn below the main tree)</p>"
                )
            else:
                self._branch(kid, i, len(kids), parent, depth + 1)
        self.emit("</div>")

    def _branch(
        self, kid: Entry, i: int, n: int, parent: Entry | None, depth: int, detached: bool = False
    ) -> None:
        current = kid.id in self.on_path
        size = self.sizes.get(kid.id, 1)
        tag = ' <span class="current">current</span>' if current else ""
        back = (
            f' <a href="#{anchor(parent.id)}">from this entry</a>' if detached and parent is not None else ""
        )
        self.emit(
            f'<details class="branch{" on-path" if current else ""}" id="{branch_anchor(kid.id)}"{" open" if current else ""}>'
            f'<summary>Branch {i} of {n}{tag}: <span class="branch-preview">{esc(preview(self.doc, kid))}</span> '
            f'<span class="count">({size:,} entries)</span>{back}</summary>'
        )
        self._run(kid, depth)
        self.emit("</details>")


def iter_leaves(doc: Document) -> Iterator[Entry]:
    yield from doc.leaves()
