"""JavaScript semantics the port must reproduce byte for byte.

pi builds the request in JavaScript; wherever JS and Python disagree on a primitive
(``JSON.stringify`` number format and key order, ``String.prototype.trim``, UTF-16 code
units) these helpers give the JavaScript answer, so the tool-call ``arguments`` strings
and shortened ids are identical to pi's.
"""

from __future__ import annotations

import re
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

import orjson

from ..common.jsnumber import js_number_text

_MAX_SAFE = 2**53

# ECMAScript WhiteSpace + LineTerminator (what String.prototype.trim removes). Python's
# str.strip() differs: it also strips \x1c-\x1f and \x85 and keeps \ufeff.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)

_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR_OR_LONE = re.compile("([\ud800-\udbff][\udc00-\udfff])|[\ud800-\udfff]")


def js_trim(text: str) -> str:
    return text.strip(JS_WHITESPACE)


def _pair_or_nothing(match: re.Match[str]) -> str:
    pair = match.group(1)
    if pair is None:
        return ""
    # Two separate code points forming a valid pair are one character in JS.
    return (pair.encode("utf-16-le", "surrogatepass")).decode("utf-16-le")


def sanitize_surrogates(text: str) -> str:
    """pi-ai's ``sanitizeSurrogates``: remove unpaired UTF-16 surrogates."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _PAIR_OR_LONE.sub(_pair_or_nothing, text)


def has_lone_surrogate(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


# --------------------------------------------------------------------------- numbers


def js_number(value: float | int) -> str:
    """``String(value)`` / ``JSON.stringify(value)``: ``null`` where JavaScript holds no
    finite number."""
    text = js_number_text(value)
    return "null" if text is None else text


# --------------------------------------------------------------------------- JSON.stringify


def _is_index_key(key: str) -> bool:
    # ECMAScript array index: canonical decimal uint32 below 2**32 - 1
    return key.isdigit() and key.isascii() and (key == "0" or key[0] != "0") and int(key) < 4294967295


def _js_string(text: str) -> str:
    out = encode_basestring(text)
    if has_lone_surrogate(text):
        # JSON.stringify escapes lone surrogates (well-formed stringify); pairs stay literal.
        out = re.sub(
            "([\ud800-\udbff][\udc00-\udfff])|[\ud800-\udfff]",
            lambda m: _pair_or_nothing(m) if m.group(1) else f"\\u{ord(m.group(0)):04x}",
            out,
        )
    return out


def _orjson_spells_it(value: Any) -> bool:
    """Whether ``orjson.dumps`` writes ``value`` as ``JSON.stringify`` does: strings, booleans,
    null, integers JavaScript holds exactly, arrays, and objects with string keys none of
    which is all digits (JavaScript writes array-index keys first). Floats are spelled
    differently (``1.0`` against ``1``) and take the exact path."""
    t = type(value)
    if t is str or t is bool or value is None:
        return True
    if t is int:
        return -_MAX_SAFE <= value <= _MAX_SAFE
    if t is dict:
        for key, item in value.items():
            if type(key) is not str or key.isdigit() or not _orjson_spells_it(item):
                return False
        return True
    if t is list or t is tuple:
        return all(_orjson_spells_it(item) for item in value)
    return False


def js_stringify(value: Any) -> str:
    """``JSON.stringify(value)`` for a JSON value parsed from a session file."""
    if _orjson_spells_it(value):
        try:
            return orjson.dumps(value).decode()
        except orjson.JSONEncodeError:  # a lone surrogate, or nesting past orjson's limit
            pass
    parts: list[str] = []
    _write(value, parts)
    return "".join(parts)


def _write(value: Any, out: list[str]) -> None:
    t = type(value)
    if t is str:
        out.append(_js_string(value))
    elif t is dict:
        keys = list(value)
        if any(_is_index_key(k) for k in keys if type(k) is str):
            index = sorted((k for k in keys if _is_index_key(k)), key=int)
            keys = index + [k for k in keys if not _is_index_key(k)]
        out.append("{")
        first = True
        for key in keys:
            if not first:
                out.append(",")
            first = False
            out.append(_js_string(str(key)))
            out.append(":")
            _write(value[key], out)
        out.append("}")
    elif t is list or t is tuple:
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, out)
        out.append("]")
    elif value is None:
        out.append("null")
    elif t is bool:
        out.append("true" if value else "false")
    elif t is int or t is float:
        out.append(js_number(value))
    else:
        out.append(_js_string(str(value)))


# --------------------------------------------------------------------------- shortHash


def _imul(a: int, b: int) -> int:
    return ((a & 0xFFFFFFFF) * (b & 0xFFFFFFFF)) & 0xFFFFFFFF


def _base36(n: int) -> str:
    if n == 0:
        return "0"
    chars = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = []
    while n:
        n, r = divmod(n, 36)
        out.append(chars[r])
    return "".join(reversed(out))


def short_hash(text: str) -> str:
    """pi-ai's ``shortHash`` (cyrb53-style over UTF-16 code units)."""
    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        ch = data[i] | (data[i + 1] << 8)
        h1 = _imul(h1 ^ ch, 2654435761)
        h2 = _imul(h2 ^ ch, 1597334677)
    h1 = _imul(h1 ^ (h1 >> 16), 2246822507) ^ _imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = _imul(h2 ^ (h2 >> 16), 2246822507) ^ _imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2 & 0xFFFFFFFF) + _base36(h1 & 0xFFFFFFFF)
