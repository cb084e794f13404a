"""Comparing two conversations: two leaves of one session, or two sessions (a fork and
the session it was copied from, or any two).

The common part is the longest run from the root that both paths hold: in one session,
the path to the two leaves' last common ancestor; between two sessions, the entries both
files hold with the same id, time stamp and content (what pi's ``/fork`` and ``/clone`` copy),
label entries passed over (``/fork`` drops them and writes new ones). After it, each side
has its own part, cut into turns at each prompt, and the turns are aligned prompt by
prompt (:mod:`difflib`), each pair marked with what differs.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping, Sequence

from ..errors import UsageError
from ..facts.lineage import entry_key
from ..facts.titles import prompt_text
from ..ir import Document, Entry, Label, MessageBody, ToolResult, UserMessage
from ..leaf import resolve_leaf
from .model import DIFFERENCES, SessionDiff, Side, Turn, TurnPair
from .parts import figures, results_by_call, turns

Key = Callable[[Entry], object]


def _by_id(entry: Entry) -> object:
    return entry.id


def _by_id_and_time(entry: Entry) -> object:
    return entry_key(entry.id, entry.timestamp)


def _copied(entry: Entry) -> object:
    """What two sessions' entries share when one is a copy of the other (pi copies an
    entry whole, but its parent, which its copy may have lost with a label): the id, the
    time stamp and the body."""
    return (entry.id, entry.timestamp, entry.body)


def diff_leaves(doc: Document, leaf: str | None, against: str) -> SessionDiff:
    """Two leaves of ``doc``: ``leaf`` (None: the document's leaf) against ``against``,
    each an entry id, a unique id prefix or a label (:func:`piconv.leaf.resolve_leaf`)."""
    leaf_a = resolve_leaf(doc, leaf) if leaf is not None else doc.leaf_id
    leaf_b = resolve_leaf(doc, against)
    if leaf_a is None:
        raise UsageError("the session has no entries to compare", path=doc.session.source_path)
    return _compare("branches", doc, leaf_a, leaf, doc, leaf_b, against, _by_id, [])


def diff_documents(
    doc_a: Document, doc_b: Document, leaf: str | None = None, against: str | None = None
) -> SessionDiff:
    """Session ``doc_a`` against ``doc_b``, each at its leaf, or at ``leaf`` (in A) and
    ``against`` (in B). When one holds copies of the other's entries (a fork) and a side's
    leaf was not named, that side is taken at the branch the copy was made from if its
    own leaf is on another: the common part is then the copied one (a note says so)."""
    notes: list[str] = []
    leaf_a = resolve_leaf(doc_a, leaf) if leaf is not None else doc_a.leaf_id
    leaf_b = resolve_leaf(doc_b, against) if against is not None else doc_b.leaf_id
    kind = "fork" if _forked(doc_a, doc_b) or _forked(doc_b, doc_a) else "sessions"
    if kind == "fork":
        child, parent = ("B", "A") if _forked(doc_b, doc_a) else ("A", "B")
        notes.append(f"{child} was forked from {parent} (its header names {parent}'s file)")
    if leaf is None:
        leaf_a = _at_the_copy(doc_a, leaf_a, doc_b, leaf_b, "A", notes)
    if against is None:
        leaf_b = _at_the_copy(doc_b, leaf_b, doc_a, leaf_a, "B", notes)
    return _compare(kind, doc_a, leaf_a, leaf, doc_b, leaf_b, against, _copied, notes)


def _forked(child: Document, parent: Document) -> bool:
    """Whether ``child``'s header names ``parent``'s file (by its name: an archive may
    have moved) or carries its session id in pi's file name."""
    named = child.session.parent_session
    if not isinstance(named, str) or not named:
        return False
    name = os.path.basename(named.replace("\\", "/"))
    source = parent.session.source_path
    if source and name == os.path.basename(source):
        return True
    return bool(parent.session.id) and name.endswith(f"_{parent.session.id}.jsonl")


def _path(doc: Document, leaf: str | None) -> list[Entry]:
    return doc.path(leaf) if leaf is not None else []


def _at_the_copy(
    doc: Document, leaf: str | None, other: Document, other_leaf: str | None, side: str, notes: list[str]
) -> str | None:
    """``doc``'s leaf for the comparison: its own, unless ``other``'s path holds copies of
    ``doc``'s entries and ``doc``'s path holds none of them: then the newest entry at or
    below the last copied one (the branch the copy was made from)."""
    keys = {_by_id_and_time(e): e for e in doc.entries}
    own = {_by_id_and_time(e) for e in _path(doc, leaf)}
    shared = [keys[k] for k in map(_by_id_and_time, _path(other, other_leaf)) if k in keys]
    if not shared or any(_by_id_and_time(e) in own for e in shared):
        return leaf
    copied_from = shared[-1]
    below = {copied_from.id}
    newest = copied_from
    for entry in doc.entries:  # file order: a child comes after its parent
        if entry.parent_id in below and entry.id not in below:
            below.add(entry.id)
            newest = entry
    flag = "--leaf" if side == "A" else "--against"
    notes.append(
        f"{side} is compared at {newest.id}, the end of the branch the copy was made from; "
        f"its own leaf is on another branch: {flag} {leaf} compares that one"
    )
    return newest.id


def _common(path_a: Sequence[Entry], path_b: Sequence[Entry], key: Key) -> tuple[int, int]:
    """How many entries of each path the common part takes: the longest run from the
    root whose entries match by ``key``, labels passed over on either side."""
    i = j = 0
    matched = (0, 0)
    while True:
        while i < len(path_a) and type(path_a[i].body) is Label:
            i += 1
        while j < len(path_b) and type(path_b[j].body) is Label:
            j += 1
        if i < len(path_a) and j < len(path_b) and key(path_a[i]) == key(path_b[j]):
            i += 1
            j += 1
            matched = (i, j)
        else:
            return matched


def _is_prompt(entry: Entry) -> bool:
    return type(entry.body) is MessageBody and type(entry.message) is UserMessage


def _compare(
    kind: str,
    doc_a: Document,
    leaf_a: str | None,
    asked_a: str | None,
    doc_b: Document,
    leaf_b: str | None,
    asked_b: str | None,
    key: Key,
    notes: list[str],
) -> SessionDiff:
    path_a, path_b = _path(doc_a, leaf_a), _path(doc_b, leaf_b)
    i, j = _common(path_a, path_b, key)
    results_a, results_b = results_by_call(path_a), results_by_call(path_b)
    common = path_a[:i]
    shared_prompts = [e for e in common if _is_prompt(e)]
    shared_prompt = None
    if shared_prompts:
        shared_prompt = prompt_text(shared_prompts[-1].message) or None  # type: ignore[arg-type]
    first = len(shared_prompts) + 1
    open_turn = bool(shared_prompts)
    side_a = _side("A", doc_a, leaf_a, asked_a, path_a, path_a[i:], results_a, first, open_turn)
    side_b = _side("B", doc_b, leaf_b, asked_b, path_b, path_b[j:], results_b, first, open_turn)
    return SessionDiff(
        kind=kind,
        a=side_a,
        b=side_b,
        common=figures(common, results_a, doc_a.session.cwd),
        common_ancestor=common[-1].id if common else None,
        shared_prompt=shared_prompt,
        pairs=tuple(align(side_a.turns, side_b.turns)),
        notes=tuple(notes),
    )


def _side(
    name: str,
    doc: Document,
    leaf: str | None,
    asked: str | None,
    path: list[Entry],
    own: list[Entry],
    results: Mapping[str, ToolResult],
    first_number: int,
    open_turn: bool,
) -> Side:
    cwd = doc.session.cwd
    own_turns = turns(own, results, first_number, open_turn)
    prompt = next((t.prompt for t in own_turns if not t.continued), None)
    return Side(
        name=name,
        source=doc.session.source_path,
        session_id=doc.session.id,
        session_name=doc.session_name(),
        leaf_id=leaf,
        leaf_label=doc.labels().get(leaf) if leaf is not None else None,
        asked=asked,
        path=figures(path, results, cwd),
        own=figures(own, results, cwd),
        first_prompt=prompt,
        turns=tuple(own_turns),
    )


def _differs(a: Turn, b: Turn) -> tuple[str, ...]:
    found = []
    for what in DIFFERENCES:
        if what == "tools":
            same = [(t.name, t.target) for t in a.tools] == [(t.name, t.target) for t in b.tools]
        else:
            same = getattr(a, what) == getattr(b, what)
        if not same:
            found.append(what)
    return tuple(found)


def align(a: Sequence[Turn], b: Sequence[Turn]) -> list[TurnPair]:
    """The turns of two sides paired: the same prompts with each other (the longest
    matching runs, as :class:`difflib.SequenceMatcher` finds them), the others in order
    where both sides have some, else alone."""
    matcher = difflib.SequenceMatcher(None, [t.prompt for t in a], [t.prompt for t in b], autojunk=False)
    pairs: list[TurnPair] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op in ("equal", "replace"):
            for k in range(max(a1 - a0, b1 - b0)):
                ta = a[a0 + k] if a0 + k < a1 else None
                tb = b[b0 + k] if b0 + k < b1 else None
                pairs.append(TurnPair(ta, tb, _differs(ta, tb) if ta and tb else ()))
        elif op == "delete":
            pairs.extend(TurnPair(t, None, ()) for t in a[a0:a1])
        else:
            pairs.extend(TurnPair(None, t, ()) for t in b[b0:b1])
    return pairs
