"""JSON output that never fails on data piconv kept: orjson first, the stdlib for values
orjson refuses (strings with lone UTF-16 surrogates, integers beyond 64 bits).

Neither path writes ``Infinity`` or ``NaN``, which are not JSON: a number beyond the double
range (``1e400`` in a session, read as infinity as JavaScript reads it) is written as
``null``, as orjson and JavaScript's ``JSON.stringify`` both do. A writer that must account
for it reports a loss for the lines the reader flagged ``infinite-number``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

NULLED = "number-written-as-null"
"""The loss code of a writer whose JSON holds a number the reader flagged ``infinite-number``."""


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
            finite(value),
            ensure_ascii=True,
            sort_keys=sort_keys,
            indent=2 if indent else None,
            separators=None if indent else (",", ":"),
        ).encode()


def loads(data: bytes | str) -> Any:
    """orjson first; the stdlib for text orjson refuses but JSON allows (a lone surrogate
    escape, which :func:`dumps` writes for strings that hold one)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        import json

        return json.loads(data)


def finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by ``None`` (walked without recursion)."""
    if type(value) is float:
        return value if value - value == 0 else None
    if type(value) not in (dict, list):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(value, root, 0)]  # type: ignore[list-item]
    while stack:
        item, parent, key = stack.pop()  # type: ignore[misc]
        copy: Any = dict(item) if type(item) is dict else list(item)
        parent[key] = copy
        for k, v in copy.items() if type(copy) is dict else enumerate(copy):
            if type(v) is float and v - v != 0:
                copy[k] = None
            elif type(v) is dict or type(v) is list:
                stack.append((v, copy, k))  # type: ignore[arg-type]
    return root[0]


def report_nulls(report: Any, issues: Iterable[Any]) -> None:
    """Reports ``NULLED`` on ``report`` for each line the reader flagged ``infinite-number``:
    what a JSON writer of that document wrote there is ``null``."""
    for issue in issues:
        if issue.code == "infinite-number":
            report.add(NULLED, issue.line, "a number beyond the double range")
