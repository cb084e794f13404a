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
from collections.abc import Callable, Mapping
from itertools import chain
from operator import attrgetter
from typing import Any

from ..ir import EMPTY, Document, Entry, Image, Node
from ..records import Mutable, compile_maker
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
_INERT = frozenset({int, float, bool, type(None), frozenset, set})
"""What the walk passes over: numbers, and sets (of member names, in an entry's origin)."""
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


class _Plan:
    """What the walk does with an IR class: the fields it scans (``names``, read by
    ``get`` in one call), and whether a node of it may hold something the rebuild drops
    (a signature, an extra mapping, an image)."""

    __slots__ = ("extra", "get", "image", "names", "signature")

    def __init__(self, cls: type) -> None:
        self.names = _scanned(cls)
        self.get = _getter(self.names)
        self.signature, self.extra = _droppable(cls)
        self.image = issubclass(cls, Image)


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The values of ``names`` of an object as a tuple, in one call."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda node: (one(node),)
    return lambda node: ()


_PLANS: dict[type, _Plan] = {}


def _plan_of(cls: type) -> _Plan:
    plan = _PLANS[cls] = _Plan(cls)
    return plan


_KEEP, _SCAN, _SIGNATURE, _IMAGE_DATA, _EXTRA = range(5)
_Fields = tuple[tuple[tuple[int, int], ...], Callable[[Any], tuple[Any, ...]], Callable[..., Any]]
_FIELDS: dict[type, _Fields] = {}


def _fields_of(cls: type) -> _Fields:
    """What the rebuild does with each field of an IR class but the tree's ids (kept as
    they are), as ``(position, kind)``: drop it (a signature; an image's data with
    ``images``), rebuild an ``extra`` mapping (its opaque members dropped), or scan it;
    the values of all the fields in one call; a positional constructor that fills the
    slots directly."""
    fields = _FIELDS.get(cls)
    if fields is None:
        names: tuple[str, ...] = cls._names  # type: ignore[attr-defined]
        kinds = tuple(
            _KEEP
            if name in STRUCTURAL
            else _SIGNATURE
            if name == "signature"
            else _IMAGE_DATA
            if name == "data" and issubclass(cls, Image)
            else _EXTRA
            if name == "extra"
            else _SCAN
            for name in names
        )
        steps = tuple((index, kind) for index, kind in enumerate(kinds) if kind != _KEEP)
        fields = _FIELDS[cls] = (steps, _getter(names), compile_maker(cls))
    return fields


def _opaque(extra: Mapping[str, Any]) -> bool:
    """Whether an ``extra`` mapping holds a signature or encrypted member (dropped)."""
    return any(isinstance(k, str) and v is not None and OPAQUE_EXTRA.search(k) for k, v in extra.items())


def _droppable(cls: type) -> tuple[bool, bool]:
    """Whether an IR class has a ``signature`` field and an ``extra`` mapping: what the
    rebuild may drop whatever the scan finds."""
    flags = _DROPPABLE.get(cls)
    if flags is None:
        names = cls._names  # type: ignore[attr-defined]
        flags = _DROPPABLE[cls] = ("signature" in names, "extra" in names)
    return flags


EVERYWHERE_MIN = 8
"""A secret found this long or longer is replaced wherever else it appears in the session,
with or without the context its rule needed (a generic key's value in a tool's arguments,
apart from its key); a shorter one only where found."""
_FOUND_EVERYWHERE = frozenset({"home", "user", "value", "env"})
"""Rules that find every occurrence themselves (the user name only as a word, by design)."""


def _everywhere(strings: list[str], spans: list[Span]) -> list[Span]:
    """Every other occurrence, plain or JSON-escaped, of each secret the scan found, under
    the rule that found it first (so with the same placeholder)."""
    from .rules import escaped_forms

    forms: dict[str, tuple[str, str]] = {}
    for span in spans:
        if span.rule not in _FOUND_EVERYWHERE and len(span.secret) >= EVERYWHERE_MIN:
            for form in escaped_forms(span.secret):
                forms.setdefault(form, (span.rule, span.secret))
    if not forms:
        return []
    search = re.compile("|".join(map(re.escape, sorted(forms, key=lambda f: (-len(f), f))))).finditer
    return [
        Span(index, m.start(), m.end(), *forms[m.group()])
        for index, string in enumerate(strings)
        for m in search(string)
    ]


class RuleCount(Mutable):
    __slots__ = ("count", "entries", "lines", "values")
    _fields = ("count", "values", "entries", "lines")

    def __init__(self) -> None:
        self.count = 0
        self.values: set[str] = set()  # placeholders, never the secret
        self.entries: list[str] = []
        self.lines: list[int] = []


class Outcome(Mutable):
    """What a redaction did: by rule, how many values it replaced and where (entry ids
    and source lines); what it dropped (``signature``, ``image``)."""

    __slots__ = ("dropped", "rules")
    _fields = ("rules", "dropped")

    def __init__(self) -> None:
        self.rules: dict[str, RuleCount] = {}
        self.dropped: dict[str, RuleCount] = {}

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
        self._strings: dict[str, None] = {}  # the distinct strings, in document order
        self._replaced: dict[str, tuple[str, list[tuple[str, str | None]]]] = {}
        self._placeholders: dict[str, str] = {}
        self._numbers: dict[str, int] = {}
        self._entry: Entry | None = None
        self._left = -1  # strings still to replace in the entry being rebuilt (-1: not counted)

    # -- pass 1: the distinct strings, in document order
    def _collect(self, value: Any) -> None:
        """Adds the strings of ``value`` (in order, at any depth) to the distinct strings
        (the session's header and the issues: rebuilt whatever they hold)."""
        if value is not None and value.__class__ not in _SCALARS:
            seen: list[str] = []
            self._walk(value, seen)
            self._strings.update(dict.fromkeys(seen))

    def _walk(self, value: Any, seen: list[str]) -> bool:
        """Appends the strings of ``value`` to ``seen``, in order; returns whether
        ``value`` holds something to drop. The hot loop of a redaction: a string met as a
        field, an item or a key is taken in place rather than through a call."""
        cls = value.__class__
        drops = False
        plan = _PLANS.get(cls)
        if plan is not None:  # an IR node: most of what the walk meets
            for item in plan.get(value):
                cls = item.__class__
                if cls is str:
                    seen.append(item)
                elif cls not in _INERT and item is not EMPTY:
                    drops = self._walk(item, seen) or drops
            # what the rebuild drops whatever the scan finds: a signature, an image's data
            # (with images), an opaque member of extra
            return (
                drops
                or (plan.signature and value.signature is not None)  # type: ignore[attr-defined]
                or (plan.image and self.drop_images and value.data is not None)  # type: ignore[attr-defined]
                or (plan.extra and value.extra is not EMPTY and _opaque(value.extra))  # type: ignore[attr-defined]
            )
        if cls is str:
            seen.append(value)
        elif cls is dict:
            for key, item in value.items():
                if key.__class__ is str:
                    seen.append(key)
                else:
                    drops = self._walk(key, seen) or drops
                cls = item.__class__
                if cls is str:
                    seen.append(item)
                elif cls not in _INERT:
                    drops = self._walk(item, seen) or drops
        elif cls is list or cls is tuple:
            for item in value:
                cls = item.__class__
                if cls is str:
                    seen.append(item)
                elif cls not in _INERT:
                    drops = self._walk(item, seen) or drops
        elif isinstance(value, Node):
            _plan_of(cls)
            return self._walk(value, seen)
        elif isinstance(value, str):  # a str subclass
            return self._walk(str(value), seen)
        elif isinstance(value, Mapping):
            if value:
                return self._walk(dict(value), seen)
        elif isinstance(value, (list, tuple)):
            return self._walk(list(value), seen)
        return drops

    # -- pass 2: one scan, a replacement for each string holding a secret
    def _plan(self) -> None:
        strings = list(self._strings)
        by_string: dict[int, list[Span]] = {}
        spans = self.scanner.scan(strings)
        for span in chain(spans, _everywhere(strings, spans)):
            by_string.setdefault(span.string, []).append(span)
        for index in sorted(by_string):
            text = strings[index]
            kept: list[Span] = []
            for span in sorted(by_string[index], key=lambda s: (s.start, s.start - s.end)):
                if span.end <= span.start:
                    continue
                if kept and span.start < kept[-1].end:
                    if span.end <= kept[-1].end:
                        continue  # inside one kept already
                    # overlapping one kept and running on: the rest goes too, under its own
                    # placeholder, so no part of either is left
                    span = span._replace(start=kept[-1].end)
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
    def _replace(self, value: str) -> str:
        """The replacement of a string holding a secret, noted in the outcome."""
        new, hits = self._replaced[value]
        self._left -= 1
        note, rules, entry = self.outcome.note, self.outcome.rules, self._entry
        for rule, placeholder in hits:
            note(rules, rule, entry, placeholder)
        return new

    def _note_dropped(self, kind: str) -> None:
        self.outcome.note(self.outcome.dropped, kind, self._entry)

    def _rebuild(self, value: Any) -> Any:
        cls = value.__class__
        if cls is str:
            return self._replace(value) if value in self._replaced else value
        if value is None or cls in _SCALARS:
            return value
        if cls in _FIELDS:
            return self._rebuild_node(value)
        if cls is dict:
            return self._rebuild_mapping(value, top_extra=False)
        if cls is tuple or cls is list:
            replaced = self._replaced
            items: list[Any] | None = None  # copied at the first change
            for index, item in enumerate(value):
                if self._left == 0:  # nothing more to replace in this entry
                    break
                kind = item.__class__
                if kind is str:
                    if item not in replaced:
                        continue
                    new = self._replace(item)
                elif item is None or kind in _SCALARS:
                    continue
                elif kind in _FIELDS:
                    new = self._rebuild_node(item)
                else:
                    new = self._rebuild(item)
                if new is not item:
                    if items is None:
                        items = list(value)
                    items[index] = new
            return value if items is None else cls(items)
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
        if not value:
            return value
        replaced = self._replaced
        changed = False
        out = {}
        pairs = iter(value.items())
        for key, item in pairs:
            if self._left == 0:  # nothing more to replace in this entry
                if not changed:
                    return value
                out[key] = item
                out.update(pairs)
                break
            if key.__class__ is str:
                if top_extra and item is not None and OPAQUE_EXTRA.search(key):
                    self._note_dropped("signature")
                    changed = True
                    continue
                new_key = self._replace(key) if key in replaced else key
            else:
                new_key = self._rebuild(key)
            kind = item.__class__
            if kind is str:
                new_item = self._replace(item) if item in replaced else item
            elif item is None or kind in _SCALARS:
                new_item = item
            else:
                new_item = self._rebuild(item)
            if new_key is not key or new_item is not item:
                changed = True
            out[new_key] = new_item
        return out if changed else value

    def _rebuild_node(self, node: Node) -> Node:
        replaced = self._replaced
        values: list[Any] | None = None  # the fields' values, copied at the first change
        steps, get, make = _FIELDS.get(node.__class__) or _fields_of(node.__class__)
        olds = get(node)
        for index, kind in steps:
            if self._left == 0:  # nothing more to replace in this entry
                break
            old = olds[index]
            if old is None or old is EMPTY:
                continue
            cls = old.__class__
            if cls is str and kind == _SCAN:
                if old not in replaced:
                    continue
                new = self._replace(old)
            elif cls in _SCALARS:
                continue
            elif kind == _SIGNATURE:
                self._note_dropped("signature")
                new = None
            elif kind == _IMAGE_DATA:
                if not self.drop_images:
                    continue
                self._note_dropped("image")
                new = None
            elif kind == _EXTRA:
                new = self._rebuild_mapping(old, top_extra=True)
            elif cls in _FIELDS:
                new = self._rebuild_node(old)
            else:
                new = self._rebuild(old)
            if new is not old:
                if values is None:
                    values = list(olds)
                values[index] = new
        return node if values is None else make(*values)

    def run(self, document: Document) -> Document:
        self._collect(document.session)
        walks: list[tuple[bool, list[str]]] = []  # by entry: something to drop, its strings
        for entry in document.entries:
            seen: list[str] = []
            walks.append((self._walk(entry, seen), seen))
        self._strings.update(dict.fromkeys(chain.from_iterable(seen for _, seen in walks)))
        self._collect(document.issues)
        self._plan()
        rebuild = self._rebuild
        session = rebuild(document.session)
        entries = []
        replaced = self._replaced.keys()
        for entry, (drops, seen) in zip(document.entries, walks, strict=True):
            if not drops and replaced.isdisjoint(seen):
                entries.append(entry)
                continue
            self._entry = entry
            # the walk meets the strings in the order they were collected: once it has
            # replaced as many as the entry holds, the rest of the entry is kept as it is
            # (unless something is to be dropped)
            self._left = -1 if drops else sum(map(replaced.__contains__, seen))
            entries.append(rebuild(entry))
            self._left = -1
        self._entry = None
        issues = rebuild(document.issues)
        return Document(
            session=session,
            entries=tuple(entries),
            leaf_id=document.leaf_id,
            issues=issues,
            lines_read=document.lines_read,
            context_builder=document.context_builder,
            input_path=document.input_path or document.session.source_path,
            notes=document.notes,
            # what is unchanged keeps its source bytes: only the object the reader made of
            # a line gets them (piconv.ir.SourceLines), so a redacted entry never does
            source_lines=document.source_lines,
        )
