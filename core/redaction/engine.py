"""Redacting a document: every string of the IR, found by walking it generically.

The walk knows no field by name but these: the ids that hold the tree together
(:data:`STRUCTURAL`, never changed), ``signature`` fields and the
signature or encrypted members of an ``extra`` (opaque provider data whose content cannot
be checked: dropped), and ``Image.data`` (base64 pixels: not text; dropped with
``images``). Every other string, at any depth, in typed fields, ``extra`` mappings, tool
arguments and details, dictionary keys included, is scanned. A field the IR gains later is
covered without a change here.

Three passes: collect the distinct strings (in document order), scan them all at once
(:class:`piconv.redaction.scan.Scanner`), rebuild the objects whose strings changed. An
entry holding no string that changed and nothing to drop is kept as it is, not walked
again (most entries of a session hold no secret). A
secret gets one placeholder per session, ``[REDACTED:<rule>#<n>]``, numbered per rule in
order of first appearance, so the same value reads the same everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..ir import Document, Entry, Image, Node
from .scan import Scanner, Span

STRUCTURAL = frozenset(
    {
        "id",
        "parent_id",
        "target_id",
        "call_id",
        "from_id",
        "first_kept_id",
        "leaf_id",
        "entry_id",
    }
)
"""Fields holding ids of the tree: never scanned, never changed. The session file's path
is scanned like any string (the IR dump and the archive write it, and it holds the home
directory); the document keeps the path it was read from as ``input_path``, which keeps
an output off its input."""
OPAQUE_EXTRA = re.compile(r"(?i)signature|encrypted")
"""Members of an ``extra`` mapping that carry opaque provider data."""


_SCALARS = frozenset({int, float, bool})
_SCANNED: dict[type, tuple[str, ...]] = {}
_DROPPABLE: dict[type, tuple[bool, bool]] = {}


def _scanned(cls: type) -> tuple[str, ...]:
    """The fields of an IR class whose strings are scanned: all but the tree's ids,
    signatures and an image's data."""
    names = _SCANNED.get(cls)
    if names is None:
        skip = STRUCTURAL | {"signature"} | ({"data"} if cls is Image else set())
        names = _SCANNED[cls] = tuple(n for n in cls._names if n not in skip)  # type: ignore[attr-defined]
    return names


def _droppable(cls: type) -> tuple[bool, bool]:
    """Whether an IR class has a ``signature`` field and an ``extra`` mapping: what the
    rebuild may drop whatever the scan finds."""
    flags = _DROPPABLE.get(cls)
    if flags is None:
        names = cls._names  # type: ignore[attr-defined]
        flags = _DROPPABLE[cls] = ("signature" in names, "extra" in names)
    return flags


@dataclass(slots=True)
class RuleCount:
    count: int = 0
    values: set[str] = field(default_factory=set)  # placeholders, never the secret
    entries: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)


@dataclass(slots=True)
class Outcome:
    """What a redaction did: by rule, how many values it replaced and where (entry ids
    and source lines); what it dropped (``signature``, ``image``)."""

    rules: dict[str, RuleCount] = field(default_factory=dict)
    dropped: dict[str, RuleCount] = field(default_factory=dict)

    def note(
        self, table: dict[str, RuleCount], rule: str, entry: Entry | None, placeholder: str | None = None
    ) -> None:
        item = table.get(rule)
        if item is None:
            item = table[rule] = RuleCount()
        item.count += 1
        if placeholder is not None:
            item.values.add(placeholder)
        if entry is not None and (not item.entries or item.entries[-1] != entry.id):
            item.entries.append(entry.id)
            item.lines.append(entry.origin.line)


class Redactor:
    def __init__(self, scanner: Scanner, *, drop_images: bool) -> None:
        self.scanner = scanner
        self.drop_images = drop_images
        self.outcome = Outcome()
        self._strings: dict[str, int] = {}
        self._replaced: dict[str, tuple[str, list[tuple[str, str | None]]]] = {}
        self._placeholders: dict[str, str] = {}
        self._numbers: dict[str, int] = {}
        self._entry: Entry | None = None
        self._seen: list[str] = []  # the strings of the entry being collected, repeats included
        self._drops = False  # the entry being collected holds something the rebuild drops

    # -- pass 1: the distinct strings, in document order
    def _collect(self, value: Any) -> None:
        cls = value.__class__
        if cls is str:
            strings = self._strings
            if value not in strings:
                strings[value] = len(strings)
            self._seen.append(value)
        elif cls is dict:
            for key, item in value.items():
                self._collect(key)
                if item is not None and item.__class__ not in _SCALARS:
                    self._collect(item)
        elif cls is list or cls is tuple:
            for item in value:
                if item is not None and item.__class__ not in _SCALARS:
                    self._collect(item)
        elif isinstance(value, Node):
            for name in _scanned(cls):
                item = getattr(value, name)
                if item is not None and item.__class__ not in _SCALARS:
                    self._collect(item)
            if not self._drops:
                self._drops = self._drops_from(value)
        elif isinstance(value, str):  # a str subclass
            self._collect(str(value))
        elif isinstance(value, Mapping):
            if value:
                self._collect(dict(value))
        elif isinstance(value, (list, tuple)):
            self._collect(list(value))

    def _drops_from(self, node: Node) -> bool:
        """What :meth:`_rebuild_node` drops from ``node`` whatever the scan finds."""
        signature, extra = _droppable(node.__class__)
        if signature and node.signature is not None:  # type: ignore[attr-defined]
            return True
        if self.drop_images and isinstance(node, Image) and node.data is not None:
            return True
        if extra:
            return any(
                isinstance(k, str) and v is not None and OPAQUE_EXTRA.search(k)
                for k, v in node.extra.items()  # type: ignore[attr-defined]
            )
        return False

    # -- pass 2: one scan, a replacement for each string holding a secret
    def _plan(self) -> None:
        strings = list(self._strings)
        by_string: dict[int, list[Span]] = {}
        for span in self.scanner.scan(strings):
            by_string.setdefault(span.string, []).append(span)
        for index in sorted(by_string):
            text = strings[index]
            kept: list[Span] = []
            for span in sorted(by_string[index], key=lambda s: (s.start, s.start - s.end)):
                if span.end > span.start and (not kept or span.start >= kept[-1].end):
                    kept.append(span)
            pieces, last, hits = [], 0, []
            for span in kept:
                replacement = "~" if span.rule == "home" else self._placeholder(span)
                pieces.append(text[last : span.start])
                pieces.append(replacement)
                last = span.end
                hits.append((span.rule, None if span.rule == "home" else replacement))
            pieces.append(text[last:])
            self._replaced[text] = ("".join(pieces), hits)

    def _placeholder(self, span: Span) -> str:
        placeholder = self._placeholders.get(span.secret)
        if placeholder is None:
            number = self._numbers[span.rule] = self._numbers.get(span.rule, 0) + 1
            placeholder = self._placeholders[span.secret] = f"[REDACTED:{span.rule}#{number}]"
        return placeholder

    # -- pass 3: rebuild what changed
    def _rebuild(self, value: Any) -> Any:
        cls = value.__class__
        if value is None or cls in _SCALARS:
            return value
        if cls is str:
            done = self._replaced.get(value)
            if done is None:
                return value
            for rule, placeholder in done[1]:
                self.outcome.note(self.outcome.rules, rule, self._entry, placeholder)
            return done[0]
        if cls is dict:
            return self._rebuild_mapping(value, top_extra=False)
        if cls is tuple or cls is list:
            items = [self._rebuild(item) for item in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return cls(items)
        if isinstance(value, Node):
            return self._rebuild_node(value)
        if isinstance(value, str):  # a str subclass
            return self._rebuild(str(value))
        if isinstance(value, Mapping):
            return self._rebuild_mapping(value, top_extra=False)
        if isinstance(value, (list, tuple)):
            return self._rebuild(list(value))
        return value

    def _rebuild_mapping(self, value: Mapping[str, Any], *, top_extra: bool) -> Any:
        changed = False
        out = {}
        for key, item in value.items():
            if top_extra and isinstance(key, str) and OPAQUE_EXTRA.search(key) and item is not None:
                self.outcome.note(self.outcome.dropped, "signature", self._entry)
                changed = True
                continue
            new_key = self._rebuild(key)
            new_item = self._rebuild(item)
            changed = changed or new_key is not key or new_item is not item
            out[new_key] = new_item
        return out if changed else value

    def _rebuild_node(self, node: Node) -> Node:
        values = []
        changed = False
        for name in node._names:
            old = getattr(node, name)
            if old is None or name in STRUCTURAL or old.__class__ in _SCALARS:
                new = old
            elif name == "signature":
                self.outcome.note(self.outcome.dropped, "signature", self._entry)
                new = None
            elif name == "data" and isinstance(node, Image):
                new = old
                if self.drop_images:
                    self.outcome.note(self.outcome.dropped, "image", self._entry)
                    new = None
            elif name == "extra":
                new = self._rebuild_mapping(old, top_extra=True)
            else:
                new = self._rebuild(old)
            changed = changed or new is not old
            values.append(new)
        return type(node)(*values) if changed else node

    def run(self, document: Document) -> Document:
        self._collect(document.session)
        walks: list[tuple[bool, list[str]]] = []  # by entry: something to drop, its strings
        for entry in document.entries:
            self._seen, self._drops = [], False
            self._collect(entry)
            walks.append((self._drops, self._seen))
        self._seen = []
        self._collect(document.issues)
        self._plan()
        session = self._rebuild(document.session)
        entries = []
        replaced = self._replaced.keys()
        for entry, (drops, seen) in zip(document.entries, walks, strict=True):
            if not drops and replaced.isdisjoint(seen):
                entries.append(entry)
                continue
            self._entry = entry
            entries.append(self._rebuild(entry))
        self._entry = None
        issues = self._rebuild(document.issues)
        return Document(
            session=session,
            entries=tuple(entries),
            leaf_id=document.leaf_id,
            issues=issues,
            lines_read=document.lines_read,
            context_builder=document.context_builder,
            input_path=document.input_path or document.session.source_path,
        )
