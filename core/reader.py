"""Bytes in, one record per physical line out; never raises on bad data.

The hot path reads large chunks, splits them on ``\\n`` and hands each line's bytes to
orjson. Only a line orjson refuses is diagnosed (slowly): invalid UTF-8, a lone UTF-16
surrogate escape (the stdlib parses it and the data is kept), two objects glued together,
a truncated last line. Memory per line is bounded by the line (and by ``max_line_bytes``),
never by the file.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import orjson

from .problems import Problem

MAX_LINE_BYTES = 256 * 1024 * 1024
"""A longer line is reported (``line-too-long``) and skipped, without being held in memory."""

CHUNK_BYTES = 4 * 1024 * 1024
BOM = b"\xef\xbb\xbf"
NUL = b"\x00"

_loads = orjson.loads
_JSONDecodeError = orjson.JSONDecodeError


@dataclass(frozen=True, slots=True)
class Record:
    line: int
    value: dict[str, Any]


@dataclass(slots=True)
class ReadResult:
    records: list[Record] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    lines_read: int = 0


def _physical_lines(stream: BinaryIO, max_line_bytes: int) -> Iterator[tuple[bytes | None, bool, int]]:
    """``(line without \\n or None when too long, ended by \\n, length)`` per physical line."""
    pending = b""
    skipping = False  # inside a line longer than the limit: discard until its newline
    skipped = 0
    read = stream.read
    while True:
        chunk = read(CHUNK_BYTES)
        if not chunk:
            break
        start = 0
        if skipping:
            nl = chunk.find(b"\n")
            if nl < 0:
                skipped += len(chunk)
                continue
            yield None, True, skipped + nl
            skipping = False
            start = nl + 1
        elif pending:
            nl = chunk.find(b"\n")
            if nl < 0:
                if len(pending) + len(chunk) > max_line_bytes:
                    skipping, skipped, pending = True, len(pending) + len(chunk), b""
                else:
                    pending += chunk
                continue
            line = pending + chunk[:nl]
            pending = b""
            if len(line) > max_line_bytes:
                yield None, True, len(line)
            else:
                yield line, True, len(line)
            start = nl + 1
        lines = chunk[start:].split(b"\n") if start else chunk.split(b"\n")
        tail = lines.pop()
        for line in lines:
            if len(line) > max_line_bytes:
                yield None, True, len(line)
            else:
                yield line, True, len(line)
        if len(tail) > max_line_bytes:
            skipping, skipped = True, len(tail)
        else:
            pending = tail
    if skipping:
        yield None, False, skipped
    elif pending:
        yield pending, False, len(pending)


def _diagnose(line: bytes, lineno: int, last: bool, recover_glued: bool) -> tuple[list[Record], list[Problem]]:
    """Why orjson refused ``line``, and what can still be kept."""
    if b"\x00" in line:
        return [], [Problem(lineno, "nul-byte", f"line contains a NUL byte at offset {line.index(NUL)}")]
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [], [Problem(lineno, "invalid-utf8", f"invalid UTF-8 at byte offset {exc.start}: {exc.reason}")]
    if not text.strip():
        return [], [Problem(lineno, "blank-line", "blank line")]
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        values = _split_glued(text)
        if values is not None:
            if recover_glued:
                records = [Record(lineno, v) for v in values if type(v) is dict]
                return records, [
                    Problem(lineno, "glued-objects", f"{len(values)} JSON values glued on one line; recovered {len(records)} objects")
                ]
            return [], [
                Problem(
                    lineno,
                    "glued-objects",
                    f"{len(values)} JSON values glued on one line; skipped (pi loses both; --recover-glued keeps them)",
                )
            ]
        if last:
            return [], [Problem(lineno, "truncated-line", f"the last line is cut short (no newline, not valid JSON: {_reason(exc)})")]
        return [], [Problem(lineno, "not-json", f"line is not valid JSON: {_reason(exc)}")]
    # The stdlib accepted what orjson refused: lone surrogate escapes (or other
    # non-I-JSON strings). The data is kept.
    problems = [Problem(lineno, "lone-surrogate", "a string holds a lone UTF-16 surrogate escape; kept as is")]
    if type(value) is not dict:
        return [], [Problem(lineno, "not-object", f"line is JSON but not an object ({_kind(value)})")]
    return [Record(lineno, value)], problems


def _reason(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at column {exc.colno}"
    return type(exc).__name__


def _kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")


def _split_glued(text: str) -> list[Any] | None:
    """Two or more JSON values side by side on one line, or ``None``."""
    decoder = json.JSONDecoder()
    values = []
    pos = 0
    end = len(text)
    while pos < end:
        while pos < end and text[pos] in " \t\r":
            pos += 1
        if pos >= end:
            break
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return None
        values.append(value)
    return values if len(values) > 1 else None


def iter_lines(
    source: BinaryIO | bytes | str | os.PathLike[str],
    *,
    recover_glued: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[Record | Problem]:
    """Yield a Record, or one or more Problems, for every physical line, in file order."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        stream: BinaryIO = io.BytesIO(bytes(source))
        close = False
    elif isinstance(source, (str, os.PathLike)):
        stream = open(source, "rb")  # noqa: SIM115 - closed below
        close = True
    else:
        stream = source
        close = False
    try:
        yield from _iter_stream(stream, recover_glued, max_line_bytes)
    finally:
        if close:
            stream.close()


def _iter_stream(stream: BinaryIO, recover_glued: bool, max_line_bytes: int) -> Iterator[Record | Problem]:
    loads = _loads
    decode_error = _JSONDecodeError
    lineno = 0
    crlf_reported = False
    for line, ended, length in _physical_lines(stream, max_line_bytes):
        lineno += 1
        if line is None:
            yield Problem(lineno, "line-too-long", f"line of {length} bytes is longer than the limit of {max_line_bytes}; skipped")
            continue
        if lineno == 1 and line.startswith(BOM):
            line = line[3:]
            yield Problem(1, "bom", "the file starts with a UTF-8 byte order mark (pi refuses such a file); read without it")
        if line.endswith(b"\r"):
            line = line[:-1]
            if not crlf_reported:
                crlf_reported = True
                yield Problem(lineno, "crlf", "CRLF line endings (reported once per file); read without the CR")
        try:
            value = loads(line)
        except decode_error:
            records, problems = _diagnose(line, lineno, not ended, recover_glued)
            yield from problems
            yield from records
            continue
        if type(value) is dict:
            if b"\x00" in line:
                # orjson accepts a raw NUL inside a string; pi's JSON.parse does not
                yield Problem(lineno, "nul-byte", f"line contains a raw NUL byte at offset {line.index(NUL)}")
                continue
            yield Record(lineno, value)
        else:
            yield Problem(lineno, "not-object", f"line is JSON but not an object ({_kind(value)})")


def read_records(source: BinaryIO | bytes | str | os.PathLike[str], **kwargs: Any) -> ReadResult:
    """Read everything: records, problems and the number of physical lines."""
    result = ReadResult()
    records = result.records
    problems = result.problems
    last_line = 0
    for item in iter_lines(source, **kwargs):
        if type(item) is Record:
            records.append(item)
        else:
            problems.append(item)  # type: ignore[arg-type]
        last_line = item.line
    result.lines_read = last_line
    return result
