"""Bytes to records: one JSON object per physical line, each with its line number.

The one line reader of piconv: pi sessions (``piconv.pi``) and ASF files (the ``asf``
reader and checker, ``piconv.converters.asf.lines``) are both read through it, so
line splitting, decoding, the nesting limit and the line-size limit are defined here once.

The reader never raises on bad data. Every physical line either yields a :class:`Record` or
is reported by at least one :class:`~piconv.problems.Problem` with its line number; see
``docs/formats/pi-reader.md`` for every case and how pi 1.6.0 handles the same bytes.

Speed shapes the code: big chunks are split on ``b"\\n"`` and each slice goes straight to
``orjson.loads``, which validates UTF-8 and rejects raw NULs, lone surrogates, BOMs and
glued objects by itself. Only a line orjson refuses is decoded and diagnosed, with the
stdlib ``json`` as the second opinion, so a clean file pays for almost nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import json

import functools
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

import orjson

from .problems import Problem
from .records import Frozen, Mutable, compile_maker, frozen

__all__ = [
    "MAX_DEPTH",
    "MAX_LINE_BYTES",
    "ReadResult",
    "Record",
    "iter_lines",
    "layout_of",
    "parse",
    "read_records",
    "same_json",
    "too_deep",
    "with_layout",
]

MAX_LINE_BYTES: int = 256 * 1024 * 1024

MAX_DEPTH: int = 200
"""The deepest nesting of arrays and objects a line may hold (the line's own object is
depth 1), unless the caller sets another (``max_depth``). Deeper lines are reported as
``too-deep`` and skipped: every writer adds a few levels of its own, and orjson serialises
no more than 255, so this leaves each format room to write what the reader kept."""


def depth_over(value: Any, limit: int) -> bool:
    """Whether ``value`` nests arrays and objects deeper than ``limit`` (walked without
    recursion, so any depth orjson can parse is measured)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if type(item) is dict:
            stack.extend((v, depth + 1) for v in item.values() if type(v) is dict or type(v) is list)
        elif type(item) is list:
            stack.extend((v, depth + 1) for v in item if type(v) is dict or type(v) is list)
    return False


_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"{[")


def _too_deep(raw: bytes | bytearray, value: Any, limit: int) -> bool:
    # Counting opening brackets (one scan in C that keeps only them) rules out almost every
    # line before any walk: a line cannot nest deeper than the brackets it holds.
    return len(raw) > limit and len(raw.translate(None, _NOT_BRACKETS)) > limit and depth_over(value, limit)


def too_deep(raw: bytes | bytearray, value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether the line ``raw`` (whose value is ``value``) nests deeper than ``limit``,
    which the reader would report and skip (a writer checks what it writes with it)."""
    return _too_deep(raw, value, limit)


# Big enough that per-chunk overhead vanishes, small enough to stay cache- and memory-friendly.
CHUNK_BYTES = 4 * 1024 * 1024

LONG_LINE_BYTES: int = CHUNK_BYTES
"""A line longer than this is decoded to text, its bytes released, and the text parsed with
Python's ``json`` (see :meth:`_LineReader._long`): orjson would hold the bytes, a copy of
them and the parsed value at once, about three times the line."""

_BOM = b"\xef\xbb\xbf"
_JSON_WS = re.compile(r"[ \t\n\r]*")
_SURROGATE = re.compile("[\ud800-\udfff]")
_BLANK = re.compile(rb"[ \t\n\r\x0b\x0c]*")  # what bytes.strip() strips
_INF = float("inf")


@frozen
class Record(Frozen):
    line: int  # 1-based physical line number
    value: dict  # the parsed JSON object, exactly as in the file
    raw: bytes | bytearray | None = None
    """The line's bytes (no newline; a CR before it kept) when the reader was asked for
    them (``keep_raw``), else ``None``: the ASF checker reads numbers exactly from them."""


# One Record per line: built through its slots, not the frozen dataclass's __init__.
_make_record = compile_maker(Record)


class ReadResult(Mutable):
    """What reading a file gave: its records, its problems, the lines read."""

    __slots__ = ("lines_read", "problems", "records")
    _fields = ("records", "problems", "lines_read")

    def __init__(
        self, records: list[Record] | None = None, problems: list[Problem] | None = None, lines_read: int = 0
    ) -> None:
        self.records: list[Record] = [] if records is None else records
        self.problems: list[Problem] = [] if problems is None else problems
        self.lines_read = lines_read


def _reject_constant(name: str) -> Any:
    # The stdlib accepts NaN and Infinity; JSON (and JavaScript's JSON.parse) do not.
    raise ValueError(f"{name} is not a JSON value")


def _parse_int(text: str) -> int | float:
    # orjson, like a JavaScript number, cannot hold an integer outside 64 bits and gives a
    # float; the fallback parser must give the same value for the same text. Past 20
    # characters the text is read as a float directly: the same correctly rounded value,
    # infinity beyond the double range (as JavaScript reads it, and as ``1e400`` is read)
    # where float(int) would raise, and no limit on the digits of an int.
    if len(text) > 20:
        return float(text)
    n = int(text)
    return n if -(2**63) <= n < 2**64 else float(n)


@functools.cache
def _decoder() -> json.JSONDecoder:
    """The stdlib's decoder, for the rare line orjson refuses (imported only then)."""
    import json

    return json.JSONDecoder(parse_constant=_reject_constant, parse_int=_parse_int)


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return "a number"


def _oddities(value: Any) -> tuple[bool, bool]:
    """(holds a lone surrogate, holds an infinite number), walked without recursion so a
    deeply nested value cannot exhaust the stack."""
    surrogate = infinite = False
    stack = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is str:
            # The stdlib joins valid pairs, so any surrogate left in a str is a lone one.
            # (isascii() is a flag lookup: it spares a huge ASCII text the scan.)
            surrogate = surrogate or (not v.isascii() and bool(_SURROGATE.search(v)))
        elif t is dict:
            for k, x in v.items():
                surrogate = surrogate or (not k.isascii() and bool(_SURROGATE.search(k)))
                stack.append(x)
        elif t is list:
            stack.extend(v)
        elif t is float and (v == _INF or v == -_INF):
            infinite = True
    return surrogate, infinite


def _split_values(text: str) -> tuple[list[Any], ValueError | RecursionError | None, int]:
    """Every JSON value on the line, in order, then the error that stopped the scan (None
    when the whole line was consumed) and where it stopped."""
    values: list[Any] = []
    pos = _JSON_WS.match(text, 0).end()  # type: ignore[union-attr]
    while pos < len(text):
        try:
            value, end = _decoder().raw_decode(text, pos)
        except (ValueError, RecursionError) as exc:
            return values, exc, pos
        values.append(value)
        pos = _JSON_WS.match(text, end).end()  # type: ignore[union-attr]
    return values, None, pos


def _describe(exc: ValueError, start: int) -> str:
    import json  # loaded already: only the stdlib decoder raises what this describes

    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at character {exc.pos}"
    return f"{exc} (in the value at character {start})"


def _stream_chunks(read: Callable[[int], bytes], size: int) -> Iterator[bytes]:
    chunk = read(size)
    if isinstance(chunk, str):
        raise TypeError("the reader needs a binary stream (for stdin: sys.stdin.buffer)")
    # A pipe may hand over fewer bytes than a BOM; the BOM check needs the first three.
    while chunk and len(chunk) < len(_BOM):
        more = read(size)
        if not more:
            break
        chunk += more
    while chunk:
        yield chunk
        chunk = read(size)


def _file_chunks(path: str | os.PathLike, size: int) -> Iterator[bytes]:
    # Unbuffered: read(size) then fills one fresh bytes object with no intermediate copy.
    with open(path, "rb", buffering=0) as f:
        yield from _stream_chunks(f.read, size)


class _LineReader:
    def __init__(self, recover_glued: bool, max_line_bytes: int, max_depth: int, keep_raw: bool) -> None:
        self.recover_glued = recover_glued
        self.limit = max_line_bytes
        self.max_depth = max_depth
        self.keep_raw = keep_raw
        # A kept line's bytes outlive its parsing anyway, so the long-line path, which
        # exists to release them early, is not taken (see _long).
        self.long_line = max_line_bytes if keep_raw else LONG_LINE_BYTES
        self.lines_read = 0
        self.crlf_seen = False
        self.held = bytearray()  # a long line on its way to _long, which takes it

    # -- the hot loop ------------------------------------------------------------------
    def run(self, chunks: Iterable[bytes]) -> Iterator[Record | Problem]:
        make_record = _make_record
        loads = orjson.loads
        decode_error = orjson.JSONDecodeError
        limit = self.limit
        max_depth = self.max_depth
        keep_raw = self.keep_raw
        long_line = self.long_line
        # A line that runs past the chunk it began in, gathered in one buffer: pieces and
        # then their join would hold a long line twice.
        pending = bytearray()
        pending_len = 0
        discarded = -1  # >= 0: inside an over-long line, this many bytes thrown away so far
        lineno = 0
        first = True  # only the file's first bytes may hold its byte order mark
        bom = False
        for chunk in chunks:
            if first:
                first = False
                if chunk.startswith(_BOM):
                    bom = True
                    chunk = chunk[len(_BOM) :]
                    yield Problem(1, "bom", "the file starts with a UTF-8 byte order mark; stripped")
            if discarded >= 0:
                nl = chunk.find(b"\n")
                if nl < 0:
                    discarded += len(chunk)
                    continue
                lineno += 1
                yield self._too_long(lineno, discarded + nl)
                discarded = -1
                chunk = chunk[nl + 1 :]
            parts = chunk.split(b"\n")
            tail = parts.pop()
            # A raw CR can only be whitespace or garbage in JSON, so one C scan per chunk
            # spares the per-line check in the (usual) file without any.
            check_cr = not self.crlf_seen and (b"\r" in chunk or pending.endswith(b"\r"))
            check_len = len(chunk) > limit
            start = 0
            if pending and parts:
                # The chunk's first piece ends the line the previous chunks began.
                if pending_len + len(parts[0]) > limit:
                    lineno += 1
                    yield self._too_long(lineno, pending_len + len(parts[0]))
                    start = 1
                elif pending_len + len(parts[0]) > long_line:
                    pending += parts[0]
                    lineno += 1
                    start = 1
                    # Handed over, not passed: _long must hold the only reference to
                    # release the bytes once decoded.
                    self.held = pending
                    pending = bytearray()
                    yield from self._long(lineno, final=False)
                else:
                    pending += parts[0]
                    parts[0] = pending  # type: ignore[call-overload]  (orjson and the checks take a bytearray)
                pending = bytearray()
                pending_len = 0
            for i in range(start, len(parts)):
                raw = parts[i]
                lineno += 1
                if check_len and len(raw) > limit:
                    yield self._too_long(lineno, len(raw))
                    continue
                try:
                    value = loads(raw)
                except decode_error:
                    yield from self._diagnose(raw, lineno, final=False)
                    continue
                if type(value) is not dict:
                    yield from self._diagnose(raw, lineno, final=False)
                    continue
                if _too_deep(raw, value, max_depth):
                    yield self._deep(lineno)
                    continue
                if check_cr and not self.crlf_seen and raw.endswith(b"\r"):
                    yield self._crlf(lineno)
                yield make_record(lineno, value, raw if keep_raw else None)
            if tail:
                pending += tail
                pending_len += len(tail)
                if pending_len > limit:
                    # Stream past the rest of the line instead of holding it.
                    discarded = pending_len
                    pending = bytearray()
                    pending_len = 0
        if discarded >= 0:
            lineno += 1
            yield self._too_long(lineno, discarded)
        elif len(pending) > long_line:
            lineno += 1
            self.held = pending
            del pending
            yield from self._long(lineno, final=True)
        elif pending or (bom and lineno == 0):
            # (A file holding just a BOM still has its one line.)
            lineno += 1
            yield from self._line(pending, lineno, final=True)
        self.lines_read = lineno

    def _line(self, raw: bytes | bytearray, lineno: int, *, final: bool) -> Iterator[Record | Problem]:
        """One line, as the hot loop reads it (for the last line and the rare fallback)."""
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            value = None
        if type(value) is dict and _too_deep(raw, value, self.max_depth):
            yield self._deep(lineno)
        elif type(value) is dict:
            if not self.crlf_seen and raw.endswith(b"\r"):
                yield self._crlf(lineno)
            yield Record(lineno, value, raw if self.keep_raw else None)
        else:
            yield from self._diagnose(raw, lineno, final=final)

    def _long(self, lineno: int, *, final: bool) -> Iterator[Record | Problem]:
        """A line longer than :data:`LONG_LINE_BYTES`, taken from ``self.held``, read to the
        same records and problems as :meth:`_line` gives, holding at most two copies of it:
        its bytes and its text while decoding, then its text and the parsed value (unless
        the text is more than twice as wide as the bytes: see below).

        Python's ``json`` reads what orjson reads to equal values (the same number rules,
        see :func:`_parse_int`; the last of duplicate keys wins), so the line goes straight
        to it; whether orjson would have refused the line (a lone surrogate, an infinite
        number) decides the problems and their order, as :meth:`_diagnose` gives them."""
        raw: bytearray = self.held
        self.held = bytearray()
        cr = raw.endswith(b"\r")
        if b"\x00" in raw or _BLANK.fullmatch(raw) is not None:
            yield from self._diagnose(raw, lineno, final=final)
            return
        try:
            text = str(memoryview(raw)[: len(raw) - cr], "utf-8")
        except UnicodeDecodeError:
            yield from self._diagnose(raw, lineno, final=final)
            return
        if sys.getsizeof(text) > 2 * len(raw):
            # A text wider than its bytes (one character beyond U+FFFF makes every one
            # four bytes): its text and its value would outweigh the bytes, a copy of
            # them and the value, so orjson reads it after all.
            del text
            yield from self._line(raw, lineno, final=final)
            return
        del raw
        values, error, stop = _split_values(text)
        value = values[0] if error is None and len(values) == 1 and type(values[0]) is dict else None
        odd = _oddities(value) if value is not None else (False, False)
        if isinstance(error, RecursionError) or (
            value is not None and odd == (False, False) and depth_over(value, self.max_depth)
        ):
            # Too deep for one parser or the depth limit: whether orjson would have read it
            # decides which problems, so it reads it again (a rare line, at its old cost).
            del values, value
            encoded = text.encode() + (b"\r" if cr else b"")
            del text
            yield from self._line(encoded, lineno, final=final)
            return
        starts_with_bom = text.startswith("\ufeff")
        del text
        if cr and not self.crlf_seen:
            yield self._crlf(lineno)
        if value is not None and odd == (False, False):
            del values
            yield Record(lineno, value)
        else:
            yield from self._judge(values, error, stop, lineno, final=final, starts_with_bom=starts_with_bom)

    # -- problems ----------------------------------------------------------------------
    def _deep(self, lineno: int) -> Problem:
        return Problem(
            lineno, "too-deep", f"arrays or objects nested deeper than {self.max_depth} levels; skipped"
        )

    def _too_long(self, lineno: int, size: int) -> Problem:
        return Problem(
            lineno, "line-too-long", f"the line is {size} bytes, over the limit of {self.limit}; skipped"
        )

    def _crlf(self, lineno: int) -> Problem:
        self.crlf_seen = True
        return Problem(
            lineno, "crlf", "lines end in CR LF (first here; not reported again); the CR is dropped"
        )

    def _diagnose(self, raw: bytes | bytearray, lineno: int, *, final: bool) -> Iterator[Record | Problem]:
        """The slow path, for a line orjson refused or that is not an object."""
        body = raw
        if body.endswith(b"\r"):
            body = body[:-1]
            if not self.crlf_seen:
                yield self._crlf(lineno)
        if not body.strip():
            yield Problem(lineno, "blank-line", "blank line")
            return
        nul = body.find(b"\x00")
        if nul >= 0:
            yield Problem(lineno, "nul-byte", f"a NUL byte at byte {nul} of the line; skipped")
            return
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            if final and exc.end == len(body) and exc.reason == "unexpected end of data":
                yield Problem(
                    lineno,
                    "truncated-line",
                    "the last line ends inside a UTF-8 character and has no newline "
                    "(an interrupted write); skipped",
                )
            else:
                yield Problem(
                    lineno, "invalid-utf8", f"invalid UTF-8 at byte {exc.start} of the line; skipped"
                )
            return

        values, error, stop = _split_values(text)
        yield from self._judge(
            values, error, stop, lineno, final=final, starts_with_bom=text.startswith("\ufeff"), raw=raw
        )

    def _judge(
        self,
        values: list[Any],
        error: ValueError | RecursionError | None,
        stop: int,
        lineno: int,
        *,
        final: bool,
        starts_with_bom: bool,
        raw: bytes | bytearray | None = None,
    ) -> Iterator[Record | Problem]:
        """The problems and records of a line Python's ``json`` read as ``values`` (from
        the bytes ``raw``, when the caller still holds them)."""
        if isinstance(error, RecursionError):
            yield Problem(lineno, "too-deep", "arrays or objects nested too deeply to parse; skipped")
            return
        if error is not None:
            why = _describe(error, stop)
            if values:
                why = f"{len(values)} complete JSON value(s), then {why}"
            if final:
                yield Problem(
                    lineno, "truncated-line", f"the last line has no newline and is not JSON ({why}); skipped"
                )
            elif starts_with_bom:
                yield Problem(
                    lineno, "not-json", "a byte order mark starts this line (not the file); skipped"
                )
            else:
                yield Problem(lineno, "not-json", f"not JSON: {why}; skipped")
            return
        if not values:
            yield Problem(lineno, "blank-line", "blank line")
            return
        if len(values) == 1:
            value = values[0]
            if type(value) is not dict:
                yield Problem(lineno, "not-object", f"the line is {_kind(value)}, not a JSON object; skipped")
                return
            yield from self._keep(lineno, value, raw)
            return
        if not all(type(v) is dict for v in values):
            kinds = ", ".join(_kind(v) if type(v) is not dict else "an object" for v in values)
            yield Problem(lineno, "not-json", f"{len(values)} JSON values on one line ({kinds}); skipped")
            return
        if not self.recover_glued:
            yield Problem(
                lineno,
                "glued-objects",
                f"{len(values)} JSON objects glued on one line; skipped (recover_glued keeps each)",
            )
            return
        yield Problem(lineno, "glued-objects", f"{len(values)} JSON objects glued on one line; each kept")
        for value in values:
            yield from self._keep(lineno, value, raw)

    def _keep(self, lineno: int, value: dict, raw: bytes | bytearray | None) -> Iterator[Record | Problem]:
        """A Record orjson could not make, with the reason the stdlib had to."""
        if depth_over(value, self.max_depth):
            yield self._deep(lineno)
            return
        surrogate, infinite = _oddities(value)
        if surrogate:
            yield Problem(
                lineno, "lone-surrogate", "a string holds an unpaired UTF-16 surrogate escape; kept as is"
            )
        if infinite:
            yield Problem(lineno, "infinite-number", "a number is beyond the double range; kept as infinity")
        yield Record(lineno, value, raw if self.keep_raw else None)


def _chunks(source: IO[bytes] | bytes | str | os.PathLike) -> Iterable[bytes]:
    if isinstance(source, bytes):
        return (source,) if source else ()
    if isinstance(source, (bytearray, memoryview)):
        return (bytes(source),) if len(source) else ()
    if isinstance(source, (str, os.PathLike)):
        return _file_chunks(source, CHUNK_BYTES)
    return _stream_chunks(source.read, CHUNK_BYTES)


def iter_lines(
    source: IO[bytes] | bytes | str | os.PathLike,
    *,
    recover_glued: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
    max_depth: int = MAX_DEPTH,
    keep_raw: bool = False,
) -> Iterator[Record | Problem]:
    """Yield a Record or one or more Problems for every physical line, in file order.

    ``source`` is a path (``str`` or path-like), the file's bytes, or a binary stream such
    as ``sys.stdin.buffer``. A line's Problems come before its Record(s). With
    ``recover_glued`` a line holding several glued objects yields each as a Record. A
    line longer than ``max_line_bytes`` or nested deeper than ``max_depth`` is a problem.
    With ``keep_raw`` each Record carries its line's bytes (``Record.raw``).
    """
    return _LineReader(recover_glued, max_line_bytes, max_depth, keep_raw).run(_chunks(source))


def read_records(
    source: IO[bytes] | bytes | str | os.PathLike,
    *,
    recover_glued: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
    max_depth: int = MAX_DEPTH,
) -> ReadResult:
    """Read everything :func:`iter_lines` yields into one :class:`ReadResult`."""
    reader = _LineReader(recover_glued, max_line_bytes, max_depth, keep_raw=False)
    records: list[Record] = []
    problems: list[Problem] = []
    add_record = records.append
    add_problem = problems.append
    for item in reader.run(_chunks(source)):
        if type(item) is Record:
            add_record(item)
        else:
            add_problem(item)  # type: ignore[arg-type]
    return ReadResult(records, problems, reader.lines_read)


# --------------------------------------------------------------------------- layouts
#
# A line's *layout* is what, beside its JSON value, it takes to write the line's bytes
# again: the order of every object's members. A JSON value says nothing of member
# order, and a format that canonicalises its lines (ASF sorts members) or a writer
# with an order of its own loses it; the layout brings it back. It is a JSON value, so
# another file can carry it: ``{"orders": [...], "exceptions": [[n, perm], ...]}``.
#
# Objects are numbered in a walk of the value that visits members in sorted order
# (code points) and array items in order, parents before children; only objects of
# two members or more count. ``orders`` holds, for each distinct set of member names
# in the order the walk first meets it, the members' order as a permutation of their
# sorted names (``0``: sorted already); ``exceptions`` lists the objects (by number)
# whose order differs from the first of their set. A line a compact JSON writer wrote
# (pi, JavaScript's ``JSON.stringify``) is its value, in its layout, written by
# ``orjson.dumps``; :func:`layout_of` says when that holds.


_ORDERS: dict[tuple[str, ...], tuple[tuple[str, ...], Any]] = {}
"""Names in a line's order -> (the names sorted, the permutation): the orders met so far
(a session repeats a few shapes on every line). Its lists are never changed."""


def layout_of(value: dict, raw: bytes | bytearray | None = None) -> dict | None:
    """The layout of a line whose parsed value (members in the line's order) is
    ``value``; with ``raw``, the line's bytes, ``None`` when the layout cannot give them
    back (spaces, escapes or number spellings of another writer, a repeated member)."""
    if raw is not None:
        try:
            if orjson.dumps(value) != raw:
                return None
        except orjson.JSONEncodeError:  # a lone surrogate, an integer beyond 64 bits
            return None
    orders: list[Any] = []
    first: dict[tuple[str, ...], int] = {}  # a set of names (sorted) -> its place in orders
    exceptions: list[list[Any]] = []
    seen = _ORDERS
    if len(seen) > 4096:  # the shapes of one session are few; another's start afresh
        seen.clear()
    number = 0
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            if len(item) > 1:
                names = tuple(item)
                known = seen.get(names)
                if known is None:
                    ordered = tuple(sorted(names))
                    place = {name: i for i, name in enumerate(ordered)}
                    known = seen[names] = (ordered, 0 if ordered == names else [place[n] for n in names])
                ordered, perm = known
                at = first.get(ordered)
                if at is None:
                    first[ordered] = len(orders)
                    orders.append(perm)
                elif orders[at] != perm:
                    exceptions.append([number, perm])
                number += 1
                children = [item[name] for name in reversed(ordered)]
            else:
                children = list(item.values())
            stack.extend(c for c in children if type(c) is dict or type(c) is list)
        else:
            stack.extend(c for c in reversed(item) if type(c) is dict or type(c) is list)
    layout: dict[str, Any] = {"orders": orders}
    if exceptions:
        layout["exceptions"] = exceptions
    return layout


class _Orders:
    """A layout being applied: the walk's object count and the sets of names met."""

    __slots__ = ("exceptions", "first", "number", "orders")

    def __init__(self, layout: Any) -> None:
        orders = layout.get("orders") if type(layout) is dict else None
        self.orders: list[Any] = orders if type(orders) is list else []
        exceptions = layout.get("exceptions") if type(layout) is dict else None
        self.exceptions: dict[int, Any] = {}
        for item in exceptions if type(exceptions) is list else ():
            if type(item) is list and len(item) == 2 and type(item[0]) is int:
                self.exceptions[item[0]] = item[1]
        self.first: dict[tuple[str, ...], int] = {}
        self.number = 0

    def order(self, names: tuple[str, ...], given: dict) -> list[str] | None:
        """The order of an object's members (``names`` sorted); ``None``: keep ``given``'s."""
        number = self.number
        self.number += 1
        at = self.first.setdefault(names, len(self.first))
        perm = self.exceptions.get(number, self.orders[at] if at < len(self.orders) else None)
        if perm == 0:
            return list(names)
        if type(perm) is list and len(perm) == len(names) and sorted(perm) == list(range(len(names))):
            return [names[i] for i in perm]
        return None  # not a permutation of these members: what the layout cannot say

    def apply(self, value: Any) -> Any:
        if type(value) is dict:
            if len(value) < 2:
                return {k: self.apply(v) if type(v) in (dict, list) else v for k, v in value.items()}
            names = tuple(sorted(value))
            order = self.order(names, value)
            members = {n: self.apply(value[n]) if type(value[n]) in (dict, list) else value[n] for n in names}
            return {n: members[n] for n in (order if order is not None else value)}
        if type(value) is list:
            return [self.apply(v) if type(v) in (dict, list) else v for v in value]
        return value


def with_layout(value: Any, layout: Any) -> Any:
    """A copy of ``value`` whose objects' members follow ``layout`` (:func:`layout_of`);
    an object the layout says nothing of keeps the order it has. ``value`` is not changed."""
    return _Orders(layout).apply(value)


def same_json(a: Any, b: Any) -> bool:
    """Whether two parsed JSON values are the same value: members in any order, but
    ``1`` is not ``1.0`` nor ``true`` (Python's ``==`` says they are)."""
    try:
        return orjson.dumps(a, option=orjson.OPT_SORT_KEYS) == orjson.dumps(b, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, TypeError):  # a lone surrogate, a number beyond 64 bits, infinity
        import json

        def spelled(value: Any) -> str:
            return json.dumps(value, sort_keys=True, ensure_ascii=True, allow_nan=True)

        try:
            return spelled(a) == spelled(b)
        except (ValueError, TypeError, RecursionError):
            return False


def parse(raw: bytes | bytearray) -> Any:
    """The JSON value of one line's bytes, as the reader reads it (orjson, else Python's
    json with the same rules for numbers); raises ``ValueError`` when it is not JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        text = bytes(raw).decode("utf-8")
        return _decoder().decode(text)
