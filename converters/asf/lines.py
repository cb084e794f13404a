"""ASF's lines: :mod:`piconv.jsonl` reads them, this module says them in ASF's terms.

The one line reader (``piconv.jsonl``, ``docs/formats/pi-reader.md``) splits, decodes and
parses the lines of both formats and applies the line-size and nesting limits. What is
ASF's own is here: its problem codes (a final line that does not parse is ``truncated``,
as RFC 0001 names it, whether or not it ends in a newline; any other line that does not
parse is ``not-json``), what it tolerates without a word (a byte order mark, CR LF line
ends), its nesting limit, and the I-JSON test of whole numbers, which needs a line's
bytes because a parsed float has already been rounded.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import IO, Any, NamedTuple, Union

from piconv import jsonl

from .jcs import int_is_ijson, is_plain

Source = Union[str, "os.PathLike[str]", bytes, IO[bytes]]

ASF_MAX_DEPTH: int = jsonl.MAX_DEPTH + 16
"""The deepest nesting an ASF line may hold. The pi reader keeps values up to
:data:`~piconv.jsonl.MAX_DEPTH` levels and the ASF writer puts a few levels of its own
around them (four at most on the corpus), so the ASF file of any session piconv reads is
read back whole; every format still writes what is kept (orjson serialises at most 255
levels; ``tests/test_asf_lines.py``)."""

# Codes of the line reader that ASF tolerates and does not report: RFC 8259 lets a parser
# ignore a byte order mark, and a CR before the LF is JSON whitespace.
_TOLERATED = frozenset({"bom", "crlf"})
# The line was kept, but its value holds a lone surrogate or an infinite number, which
# orjson refuses: Python's json read it, and it may repeat a member name, which only a
# second decode finds (see ijson_problem).
_READ_BY_STDLIB = frozenset({"lone-surrogate", "infinite-number"})
# Ways a line fails to be JSON: ``not-json`` in ASF, ``truncated`` on the last line.
_UNPARSED = frozenset({"not-json", "glued-objects", "invalid-utf8", "nul-byte", "truncated-line"})

# A number token that might not be I-JSON whatever its spelling: 16+ digits in a row or
# any decimal exponent (9.007199254740993e15 is 2**53 + 1). orjson reads such a float silently rounded, so these
# lines are decoded a second time keeping exact values. Strings that merely look like
# this cost a second decode, nothing else.
_BIG_NUMBER = re.compile(rb"[0-9]{16}|[0-9][eE][+-]?[0-9]")


class Line(NamedTuple):
    """One physical line: its object, or ``None`` and why it was skipped."""

    line: int
    value: dict[str, Any] | None
    code: str | None  # with no value: not-json, not-object, truncated, blank-line, too-deep, line-too-long
    message: str | None
    raw: bytes | bytearray | None = None  # the line's bytes, when asked for (keep_raw)
    read_by_stdlib: bool = False  # a lone surrogate or 1e400 made orjson refuse it: see ijson_problem


def iter_lines(source: Source, *, keep_raw: bool = False) -> Iterator[Line]:
    """One :class:`Line` per physical line of ``source`` (a path, bytes or a binary
    stream), in file order. With ``keep_raw`` each kept line carries its bytes, for
    :func:`ijson_problem`."""
    # A skipped line's problem (line, code, message), held until a later line shows it is
    # not the last: every physical line yields a record or a problem, so one will.
    held: tuple[int, str, str] | None = None
    stdlib_line = 0
    for item in jsonl.iter_lines(source, max_depth=ASF_MAX_DEPTH, keep_raw=keep_raw):
        if isinstance(item, jsonl.Record):
            if held is not None:
                yield _skipped(*held, last=False)
                held = None
            yield Line(item.line, item.value, None, None, item.raw, item.line == stdlib_line)
            continue
        if item.code in _TOLERATED:
            continue
        if item.code in _READ_BY_STDLIB:
            stdlib_line = item.line
            continue
        if held is not None:
            if held[0] == item.line:
                continue  # the line's first problem says why it was skipped
            yield _skipped(*held, last=False)
        held = (item.line, item.code, item.message)
    if held is not None:
        yield _skipped(*held, last=True)


def _skipped(lineno: int, code: str, message: str, *, last: bool) -> Line:
    # The reader's message without what it says of skipping (the ASF reader says it) or of
    # the pi reader's option to keep glued objects.
    message = message.partition("; skipped")[0]
    if code in _UNPARSED:
        if last:
            # RFC 0001: a reader tolerates a final line that does not parse and reports it.
            if code != "truncated-line":  # whose message already says it is the last line
                message = f"final line is cut short and does not parse ({message.removeprefix('not JSON: ')})"
            code = "truncated"
        else:
            code = "not-json"
    return Line(lineno, None, code, message)


def ijson_problem(line: Line) -> tuple[bool, str | None]:
    """Whether the kept ``line`` is plain (``jcs.is_plain``: orjson's sorted output is
    already its JCS form), and the ``not-ijson`` message for it, or ``None``: a whole
    number no binary64 holds, read exactly from the line's bytes (only a value holding a
    float or an integer beyond 2**53 can hold one), or, on a line only Python's json could
    read, a member name an object repeats. Needs the line read with ``keep_raw``."""
    raw = line.raw
    assert raw is not None and line.value is not None, "a kept line read with keep_raw"
    if line.read_by_stdlib:
        # Repeated member names are only looked for on lines orjson refused: a full
        # second decode of every line would double the cost of reading.
        problem = number_problem(raw) or _duplicate_member(raw)
        if problem is not None:
            return False, problem
    plain = is_plain(line.value)
    return plain, None if plain else number_problem(raw)


def number_problem(body: bytes | bytearray) -> str | None:
    """The ``not-ijson`` message for a whole number in ``body`` no binary64 holds."""
    if _BIG_NUMBER.search(body):
        number = _exact_number_problem(body)
        if number is not None:
            return f"number {number} is not I-JSON: no binary64 holds it exactly"
    return None


# Every binary64 is below 10**309: a number with a higher decimal exponent, or a whole
# number of more digits, is not I-JSON, decided without building it as an integer
# (1e999999999 would be a billion digits; Python parses no more than 4,300).
_MAX_EXPONENT = 308


def _exact_number_problem(raw: bytes | bytearray) -> str | None:
    """The first whole number in ``raw`` that fails the I-JSON test, spelled as written."""
    found: list[str] = []

    def parse_float(text: str) -> float:
        value = Decimal(text)
        if value.adjusted() > _MAX_EXPONENT or (
            value == value.to_integral_value() and not int_is_ijson(int(value))
        ):
            found.append(text)
        return 0.0  # only the spelling is looked at

    def parse_int(text: str) -> int:
        if len(text.lstrip("-")) > _MAX_EXPONENT + 1 or not int_is_ijson(int(text)):
            found.append(text)
        return 0

    try:
        json.loads(raw, parse_float=parse_float, parse_int=parse_int)
    except (ValueError, RecursionError):
        return None
    return found[0] if found else None


def _duplicate_member(raw: bytes | bytearray) -> str | None:
    dupes: list[str] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            dupes.extend(k for k in keys if keys.count(k) > 1)
        return dict(pairs)

    try:
        json.loads(raw, object_pairs_hook=hook)
    except (ValueError, RecursionError):
        return None
    return f"an object repeats the member name {dupes[0]!r}" if dupes else None
