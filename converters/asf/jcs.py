"""RFC 8785 (JSON Canonicalization Scheme) serialisation.

``canonical(value) -> bytes`` is exact for every I-JSON value. The fast path hands the
value to orjson with sorted keys, which is byte-identical to JCS for strings, booleans,
null, integers of magnitude ≤ 2**53 and objects whose keys sort alike by UTF-8 (orjson)
and by UTF-16 code units (JCS). The two orders differ only between a character above
U+FFFF (a surrogate pair, 0xD800-0xDFFF in UTF-16) and one in U+E000-U+FFFF, so a key
holding a supplementary character is the only key-order risk. Floats (ECMAScript's number
rendering differs from orjson's: ``1.0`` is ``1``, ``1e21`` is ``1e+21``) and integers beyond
2**53 (JCS renders every number as a binary64) are rewritten to :class:`orjson.Fragment`
holding their JCS text before orjson sees them; an object whose keys need UTF-16 ordering
is serialised here and handed over as a fragment too.

A value that needs none of this (the common case: text, tool arguments, token counts) is
recognised by :func:`is_plain`, one iterative loop over the containers (strings, ``None``
and booleans are skipped without a call; each object's keys are checked in one
``"".join``), and goes to orjson as it is. Anything else takes the rewriting walk.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ..common.jsnumber import js_number_text

__all__ = [
    "CanonicalError",
    "canonical",
    "int_is_ijson",
    "is_plain",
    "number_text",
    "spelled",
]

_OPTS = orjson.OPT_SORT_KEYS
_SAFE_INT = 2**53
_Fragment = orjson.Fragment


class CanonicalError(ValueError):
    """The value is not I-JSON (non-finite number, lone surrogate, non-string key...)."""


def number_text(value: int | float) -> str:
    """ECMAScript ``Number.prototype.toString`` of the binary64 nearest ``value``."""
    text = js_number_text(value)
    if text is None:
        raise CanonicalError(f"not a finite binary64 number: {value!r}")
    return text


def spelled(value: Any) -> Any:
    """A float as the :class:`orjson.Fragment` of its JCS text, for a writer that builds
    a number it knows is a float (a cost); anything else, and a float that is not finite
    (which :func:`canonical` must refuse), as it is. A body holding such fragments stays
    plain for :func:`is_plain`, so it is serialised without the rewriting walk."""
    if type(value) is float and value - value == 0.0:  # finite: inf - inf and nan are nan
        return _Fragment(number_text(value))
    return value


def int_is_ijson(value: int) -> bool:
    """RFC 0001's whole-number test: exactly a binary64, or the exact value of the
    canonical rendering of the nearest binary64 (so 2**60 written as 1152921504606847000
    passes and 9007199254740993 fails however it is spelled)."""
    if -_SAFE_INT <= value <= _SAFE_INT:
        return True
    try:
        nearest = float(value)
    except OverflowError:
        return False
    if int(nearest) == value:
        return True
    text = number_text(nearest)
    if "e" in text:  # from 1e21 ECMAScript writes an exponent: 1.1805916207174113e+21
        from decimal import Decimal

        return Decimal(text) == value
    return "." not in text and int(text) == value


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _needs_utf16_sort(keys: Any) -> bool:
    # Only a supplementary-plane character can sort differently (see module doc).
    return any(not k.isascii() and any(ord(c) > 0xFFFF for c in k) for k in keys)


def _prepare(value: Any) -> Any:
    """``value`` with every piece orjson would render differently replaced by a
    fragment; the same object when nothing needs replacing."""
    t = type(value)
    if t is str or t is bool or value is None or t is _Fragment:
        return value
    if t is int:
        if -_SAFE_INT <= value <= _SAFE_INT:
            return value
        if not int_is_ijson(value):
            raise CanonicalError(f"whole number {value} is not I-JSON (no binary64 holds it)")
        return orjson.Fragment(number_text(value))
    if t is float:
        return orjson.Fragment(number_text(value))
    if t is dict:
        for k in value:
            if type(k) is not str:
                raise CanonicalError(f"object key is not a string: {k!r}")
        if _needs_utf16_sort(value):
            return orjson.Fragment(_dict_text(value))
        out = None
        for k, v in value.items():
            p = _prepare(v)
            if p is not v:
                if out is None:
                    out = dict(value)
                out[k] = p
        return value if out is None else out
    if t is list or t is tuple:
        changed = None
        for i, v in enumerate(value):
            p = _prepare(v)
            if p is not v:
                if changed is None:
                    changed = list(value)
                changed[i] = p
        return value if changed is None else changed
    if isinstance(value, (int, float)):  # subclasses (bool handled above): treat as numbers
        return orjson.Fragment(number_text(value))
    raise CanonicalError(f"not a JSON value: {type(value).__name__}")


def _dict_text(value: dict[str, Any]) -> bytes:
    parts = []
    for k in sorted(value, key=_utf16_key):
        parts.append(_dump(k) + b":" + _dump(_prepare(value[k])))
    return b"{" + b",".join(parts) + b"}"


def _dump(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=_OPTS)
    except orjson.JSONEncodeError as exc:
        # orjson refuses lone surrogates (not UTF-8) and > 64-bit ints; both are not I-JSON
        # or were prepared away, so this is a real refusal.
        raise CanonicalError(str(exc)) from None


_SUPPLEMENTARY = re.compile("[\U00010000-\U0010ffff]")


def is_plain(value: Any) -> bool:
    """Whether orjson with sorted keys already renders ``value`` exactly as JCS: only
    dicts with string keys holding no supplementary-plane character, lists, tuples,
    strings, booleans, ``None``, integers of magnitude <= 2**53 and fragments of JCS
    text (:func:`spelled`). (Strings are not
    looked into: a lone surrogate makes orjson raise, which is the right refusal.)"""
    stack = [(value,)]
    pop = stack.pop
    push = stack.append
    lo, hi = -_SAFE_INT, _SAFE_INT
    while stack:
        v = pop()
        if type(v) is dict:
            try:
                keys = "".join(v)
            except TypeError:
                return False
            if type(keys) is not str or (not keys.isascii() and _SUPPLEMENTARY.search(keys)):
                return False
            v = v.values()
        for x in v:
            t = type(x)
            if t is str or x is None or t is bool:
                continue
            if t is dict or t is list or t is tuple:
                push(x)
            elif (t is not int or not lo <= x <= hi) and t is not _Fragment:
                return False
    return True


def _numbers_plain(value: Any) -> bool:
    """:func:`is_plain` without the look at keys, which :func:`canonical` makes on the
    serialised bytes instead (one scan in C rather than a join per object)."""
    stack = [(value,)]
    pop = stack.pop
    push = stack.append
    lo, hi = -_SAFE_INT, _SAFE_INT
    while stack:
        v = pop()
        if type(v) is dict:
            v = v.values()
        for x in v:
            t = type(x)
            if t is str or x is None or t is bool:
                continue
            if t is dict or t is list or t is tuple:
                push(x)
            elif (t is not int or not lo <= x <= hi) and t is not _Fragment:
                return False
    return True


def _has_supplementary(data: bytes) -> bool:
    # In UTF-8 (orjson writes nothing else) bytes F0-F4 only ever lead a character above
    # U+FFFF, and one anywhere (in a key or not) sends the value the careful way.
    return b"\xf0" in data or b"\xf1" in data or b"\xf2" in data or b"\xf3" in data or b"\xf4" in data


def canonical(value: Any) -> bytes:
    """The RFC 8785 canonical UTF-8 bytes of ``value`` (an :class:`orjson.Fragment` in it
    is taken to hold JCS text already, as :func:`spelled` makes)."""
    if _numbers_plain(value):
        # Nearly every body: no number orjson spells otherwise, so its sorted bytes are JCS
        # unless a key sorts otherwise in UTF-16, which needs a supplementary character.
        try:
            data = orjson.dumps(value, option=_OPTS)
        except orjson.JSONEncodeError:
            return _dump(_prepare(value))  # a lone surrogate, a key no str: says why
        if data.isascii() or not _has_supplementary(data):
            return data
    try:
        return orjson.dumps(_prepare(value), option=_OPTS)
    except orjson.JSONEncodeError:
        pass  # refused (lone surrogate, a key that is no str...): _dump says why
    return _dump(_prepare(value))
