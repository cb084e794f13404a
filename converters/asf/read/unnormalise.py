"""Undoing RFC 0001's I-JSON normalisation with an entry's ``normalised`` records.

``ids.normalise`` turned lone surrogates into U+FFFD and rounded whole numbers no
binary64 holds; each change is recorded as ``{"at": JSON pointer, "was": source text}``.
A string's ``was`` is its JSON text (quotes included), a number's its digits, so the
original value is ``json.loads(was)`` either way. A record whose pointer names a member
whose *name* held the surrogate says so by its ``was`` not matching the value: the name
is put back. When a name and its string value were both changed, two records share one
pointer, the name's first (``normalise`` appends it before walking the value and sorts
stably).

Not undone: two member names of one object that became the same name (the second
overwrote the first when the entry was written); a name and a value that both read as
the normalised text (one record, taken as the value's).
"""

from __future__ import annotations

import json
from typing import Any

JSONDict = dict[str, Any]


def _fix(text: str) -> str:
    return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


def _tokens(pointer: str) -> list[str]:
    if not pointer:
        return []
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _parent(root: Any, tokens: list[str]) -> Any:
    node = root
    for token in tokens:
        node = node[int(token)] if type(node) is list else node[token]
    return node


def _rename(obj: JSONDict, old: str, new: str) -> None:
    items = [(new if k == old else k, v) for k, v in obj.items()]
    obj.clear()
    obj.update(items)


def restore(entry: JSONDict) -> JSONDict:
    """``entry`` (a parsed ASF line; changed in place and returned) as it was before
    normalisation, ``normalised`` removed."""
    records = entry.pop("normalised", None)
    if not records:
        return entry
    by_pointer: dict[str, list[JSONDict]] = {}
    for record in records:
        if type(record) is dict and type(record.get("at")) is str and type(record.get("was")) is str:
            by_pointer.setdefault(record["at"], []).append(record)
    # Deepest first: a renamed member's pointer is spelled with its normalised name, so
    # names are put back only after everything below them.
    for pointer in sorted(by_pointer, key=lambda p: -p.count("/")):
        tokens = _tokens(pointer)
        group = by_pointer[pointer]
        if not tokens:
            continue
        parent = _parent(entry, tokens[:-1])
        key: Any = int(tokens[-1]) if type(parent) is list else tokens[-1]
        originals = [json.loads(r["was"]) for r in group]
        name = None
        if len(group) == 2:
            name, value = originals
            parent[key] = value
        else:
            value = originals[0]
            current = parent[key]
            if type(value) is str and not (type(current) is str and current == _fix(value)):
                name = value
            else:
                parent[key] = value
        if name is not None and type(parent) is dict:
            _rename(parent, key, name)
    return entry
