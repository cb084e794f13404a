"""Reading ASF files line by line: bytes in, ``(line, value)`` out, problems reported.

A line that is not a JSON object becomes a problem with its line number; the final line
may be cut short (a crashed writer leaves a valid prefix), which RFC 0001 says a reader
tolerates and reports, so it gets its own code.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import IO, Any, Union

import orjson

from ..jcs import int_is_ijson

Source = Union[str, "os.PathLike[str]", bytes, IO[bytes]]

# A number token that might not be I-JSON whatever its spelling: 16+ digits in a row or
# any decimal exponent (9.007199254740993e15 is 2**53 + 1). orjson reads such a float silently rounded, so these
# lines are decoded a second time keeping exact values. Strings that merely look like
# this cost a second decode, nothing else.
_BIG_NUMBER = re.compile(rb"[0-9]{16}|[0-9][eE][+-]?[0-9]")


def open_source(source: Source) -> tuple[IO[bytes], bool]:
    """A binary stream and whether the caller must close it."""
    if isinstance(source, (bytes, bytearray)):
        import io

        return io.BytesIO(bytes(source)), True
    if hasattr(source, "read"):
        return source, False  # type: ignore[return-value]
    return open(os.fspath(source), "rb"), True  # type: ignore[arg-type]


def _exact_number_problem(raw: bytes) -> str | None:
    """The first whole number in ``raw`` that fails the I-JSON test, spelled as written."""
    found: list[str] = []

    def parse_float(text: str) -> float:
        value = Decimal(text)
        if value == value.to_integral_value() and not int_is_ijson(int(value)):
            found.append(text)
        return float(text)

    def parse_int(text: str) -> int:
        if not int_is_ijson(int(text)):
            found.append(text)
        return int(text)

    try:
        json.loads(raw, parse_float=parse_float, parse_int=parse_int)
    except ValueError:
        return None
    return found[0] if found else None


def _duplicate_member(raw: bytes) -> str | None:
    dupes: list[str] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            dupes.extend(k for k in keys if keys.count(k) > 1)
        return dict(pairs)

    try:
        json.loads(raw, object_pairs_hook=hook)
    except ValueError:
        return None
    return dupes[0] if dupes else None


def iter_lines(
    stream: IO[bytes], exact_numbers: bool = True
) -> Iterator[tuple[int, dict[str, Any] | None, str | None, str | None]]:
    """``(line, value, code, message)`` per line: ``value`` is the parsed object, or
    ``None`` with a problem ``code`` (``not-json``, ``not-object``, ``truncated``,
    ``blank-line``). ``code`` may also accompany a value (``not-ijson``). With
    ``exact_numbers`` false, numbers are not looked at (see :func:`iter_raw_lines`)."""
    for lineno, _raw, value, code, message in iter_raw_lines(stream, exact_numbers):
        yield lineno, value, code, message


def iter_raw_lines(
    stream: IO[bytes], exact_numbers: bool = True
) -> Iterator[tuple[int, bytes, dict[str, Any] | None, str | None, str | None]]:
    """As :func:`iter_lines`, with each line's bytes (no line end) second. A caller
    passing ``exact_numbers=False`` takes over the whole-number test: a line can fail it
    only when its parsed value holds a float or an integer beyond 2**53 (``jcs.is_plain``
    is false), and :func:`number_problem` then reads the bytes exactly. (Lines only the
    stdlib could decode are always tested here.)"""
    lineno = 0
    pending: bytes | None = None
    for chunk in stream:
        if pending is not None:
            yield _one(lineno, pending, False, exact_numbers)
        lineno += 1
        pending = chunk
    if pending is not None:
        yield _one(lineno, pending, True, exact_numbers)


def number_problem(body: bytes) -> str | None:
    """The ``not-ijson`` message for a whole number in ``body`` no binary64 holds."""
    if _BIG_NUMBER.search(body):
        number = _exact_number_problem(body)
        if number is not None:
            return f"number {number} is not I-JSON: no binary64 holds it exactly"
    return None


def _one(
    lineno: int, raw: bytes, last: bool, exact_numbers: bool
) -> tuple[int, bytes, dict[str, Any] | None, str | None, str | None]:
    body = raw.rstrip(b"\n")
    if body.endswith(b"\r"):
        body = body[:-1]
    try:
        value = orjson.loads(body)
        fallback = False
    except orjson.JSONDecodeError as exc:
        if not body.strip():
            return lineno, body, None, "blank-line", "blank line (every line must be one JSON object)"
        try:  # orjson refuses lone surrogate escapes; the stdlib reads them, then I-JSON fails
            value = json.loads(body)
            fallback = True
        except ValueError:
            if last:
                return lineno, body, None, "truncated", f"final line is cut short and does not parse ({exc})"
            return lineno, body, None, "not-json", f"not JSON: {exc}"
    if type(value) is not dict:
        return lineno, body, None, "not-object", "line is JSON but not an object"
    problem = number_problem(body) if exact_numbers or fallback else None
    if fallback and problem is None:
        # Repeated member names are only looked for on lines orjson refused: a full
        # second decode of every line would double the cost of reading.
        dup = _duplicate_member(body)
        if dup is not None:
            problem = f"an object repeats the member name {dup!r}"
    if problem is not None:
        return lineno, body, value, "not-ijson", problem
    return lineno, body, value, None, None
