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
        if type(node) is list:
            if not token.isdigit() or len(token) > 9:
                raise KeyError(token)
            node = node[int(token)]
        elif type(node) is dict:
            node = node[token]
        else:
            raise KeyError(token)
    return node


def _rename(obj: JSONDict, old: str, new: str) -> None:
    items = [(new if k == old else k, v) for k, v in obj.items()]
    obj.clear()
    obj.update(items)


def _original(was: str) -> Any:
    """The value a record's ``was`` spells: a string's JSON text or a number's digits."""
    value = json.loads(was)
    if type(value) not in (str, int, float) or (type(value) is float and value - value != 0):
        raise ValueError("was is neither a string nor a finite number")
    return value


def restore(entry: JSONDict, issues: list[Any] | None = None, line: int = 0) -> JSONDict:
    """``entry`` (a parsed ASF line; changed in place and returned) as it was before
    normalisation, ``normalised`` removed. A record that names no member of the entry,
    or whose ``was`` spells no string or number, is left alone and reported
    (``bad-normalised``) in ``issues``."""
    records = entry.pop("normalised", None)
    if not records:
        return entry
    from piconv import ir

    def bad(why: str) -> None:
        if issues is not None:
            issues.append(ir.Issue(line, "bad-normalised", f"a normalised record {why}; left alone"))

    if type(records) is not list:
        bad("list that is not a list")
        return entry
    by_pointer: dict[str, list[JSONDict]] = {}
    for record in records:
        if type(record) is dict and type(record.get("at")) is str and type(record.get("was")) is str:
            by_pointer.setdefault(record["at"], []).append(record)
        else:
            bad("without a string at and was")
    # Deepest first: a renamed member's pointer is spelled with its normalised name, so
    # names are put back only after everything below them.
    for pointer in sorted(by_pointer, key=lambda p: -p.count("/")):
        group = by_pointer[pointer]
        tokens = _tokens(pointer)
        if not tokens or not pointer.startswith("/") or len(group) > 2:
            bad(f"at {pointer[:40]!r} that names no member it can restore")
            continue
        try:
            parent = _parent(entry, tokens[:-1])
            if type(parent) is list:
                key: Any = int(tokens[-1]) if tokens[-1].isdigit() and len(tokens[-1]) < 10 else None
                if key is None or key >= len(parent):
                    raise KeyError(tokens[-1])
            elif type(parent) is dict:
                key = tokens[-1]
                if key not in parent:
                    raise KeyError(key)
            else:
                raise KeyError(tokens[-1])
            originals = [_original(r["was"]) for r in group]
        except (KeyError, IndexError, ValueError, RecursionError):
            bad(f"at {pointer[:40]!r} that names no member of the entry, or whose was is no string or number")
            continue
        name = None
        if len(group) == 2:
            name, value = originals
            if type(name) is not str:
                bad(f"at {pointer[:40]!r} whose first was is no member name")
                continue
            parent[key] = value
        else:
            value = originals[0]
            current = parent[key]
            if type(value) is str and not (type(current) is str and current == _fix(value)):
                name = value
            else:
                parent[key] = value
        if name is not None and type(parent) is dict and name != key:
            if name in parent:
                bad(f"at {pointer[:40]!r} whose name another member holds")
                continue
            _rename(parent, key, name)
    return entry
