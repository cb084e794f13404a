"""JSON output that never fails on data piconv kept: orjson first, the stdlib for values
orjson refuses (strings with lone UTF-16 surrogates, integers beyond 64 bits)."""

from __future__ import annotations

from typing import Any

import orjson


def dumps(value: Any, *, sort_keys: bool = False, indent: bool = False) -> bytes:
    option = orjson.OPT_NON_STR_KEYS
    if sort_keys:
        option |= orjson.OPT_SORT_KEYS
    if indent:
        option |= orjson.OPT_INDENT_2
    try:
        return orjson.dumps(value, option=option)
    except (TypeError, orjson.JSONEncodeError):
        import json

        # ensure_ascii escapes a lone surrogate as \udXXX, which is valid JSON and keeps it
        return json.dumps(
            value, ensure_ascii=True, sort_keys=sort_keys, indent=2 if indent else None, separators=None if indent else (",", ":")
        ).encode()


def loads(data: bytes | str) -> Any:
    """orjson first; the stdlib for text orjson refuses but JSON allows (a lone surrogate
    escape, which :func:`dumps` writes for strings that hold one)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        import json

        return json.loads(data)
