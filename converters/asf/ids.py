"""Content-addressed entry ids, the canonical ``ts`` spelling and I-JSON normalisation.

An entry's id is computed in two layers (RFC 0001, "Entry hash"): the **content** is the
entry minus the envelope members; its hash is ``sha256:`` + hex SHA-256 of its RFC 8785
bytes; the **envelope** ``{type, parent, [parents], ts, content}`` is hashed the same way
and that hash is the id.
"""

from __future__ import annotations

import functools
import hashlib
import re
from datetime import date, datetime, timedelta, timezone
from typing import Any

from .jcs import CanonicalError, canonical, int_is_ijson

__all__ = [
    "ENVELOPE",
    "RESERVED",
    "CanonicalError",
    "canonical_ts",
    "content_hash",
    "entry_id",
    "envelope_id",
    "envelope_id_plain",
    "is_canonical_ts",
    "normalise",
    "ts_from_millis",
]

ENVELOPE = ("id", "type", "parent", "parents", "ts")
RESERVED = frozenset((*ENVELOPE, "content"))
"""Names a body must not carry at its top level."""

_sha256 = hashlib.sha256


def _digest(data: bytes) -> str:
    return "sha256:" + _sha256(data).hexdigest()


def content_hash(body: dict[str, Any]) -> str:
    """Hash of ``body`` (an entry's content: envelope members already removed)."""
    return _digest(canonical(body))


def envelope_id(type_: str, parent: str | None, ts: str, content: str, parents: Any = None) -> str:
    envelope: dict[str, Any] = {"type": type_, "parent": parent, "ts": ts, "content": content}
    if parents:  # an empty list is omitted, as the RFC requires of a writer
        envelope["parents"] = parents
    return _digest(canonical(envelope))


def envelope_id_plain(type_: str, parent: str | None, ts: str, content: str) -> str:
    """:func:`envelope_id` without ``parents`` for a writer whose ``type_``, ``ts`` and
    ``parent`` are its own plain ASCII (no quote, backslash or control character): the
    canonical envelope is spelled directly (members already in JCS order)."""
    parent_json = "null" if parent is None else f'"{parent}"'
    text = f'{{"content":"{content}","parent":{parent_json},"ts":"{ts}","type":"{type_}"}}'
    return "sha256:" + _sha256(text.encode()).hexdigest()


def entry_id(line: dict[str, Any]) -> str:
    """The id an entry line must carry, computed from its own members."""
    body = {k: v for k, v in line.items() if k not in ENVELOPE}
    return envelope_id(
        line.get("type"), line.get("parent"), line.get("ts"), content_hash(body), line.get("parents")
    )  # type: ignore[arg-type]


# --------------------------------------------------------------------------- ts

_date = date
_TS = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:([Zz])|([+-])(\d{2}):?(\d{2}))"
)


# pi's toISOString() form, hour, minute and second in range; groups: day, fraction
_JS_TS = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.([0-9]{3})Z"
).fullmatch


@functools.lru_cache(maxsize=64)
def _is_day(day: str) -> bool:
    """Whether ``YYYY-MM-DD`` (ASCII digits) names a day ``datetime`` holds. Cached: a
    session's entries share a handful of days, so the constructor is met once per day."""
    try:
        _date(int(day[:4]), int(day[5:7]), int(day[8:10]))
    except ValueError:
        return False
    return True


def canonical_ts(text: str) -> str | None:
    """The one RFC 0001 spelling of an RFC 3339 timestamp (UTC, ``T``/``Z``, fraction
    truncated to nine digits without trailing zeros, second 60 as 59); ``None`` when
    ``text`` is no RFC 3339 date-time."""
    # JavaScript's toISOString() (YYYY-MM-DDTHH:MM:SS.mmmZ, what pi writes) when the day
    # exists and hour, minute and second are in range; a leap second or anything else
    # takes the general path.
    match = _JS_TS(text)
    if match is not None and _is_day(match[1]):
        fraction = match[2].rstrip("0")
        return f"{text[:19]}.{fraction}Z" if fraction else f"{text[:19]}Z"
    return canonical_ts_general(text)


def canonical_ts_general(text: str) -> str | None:
    """:func:`canonical_ts` by the regular expression alone (every RFC 3339 form)."""
    m = _TS.fullmatch(text)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.group(1, 2, 3, 4, 5, 6))
    second = min(second, 59)  # leap second: no time type holds it
    try:
        when = datetime(year, month, day, hour, minute, second)
    except ValueError:
        return None
    if m.group(9):
        offset = timedelta(hours=int(m.group(10)), minutes=int(m.group(11)))
        when = when - offset if m.group(9) == "+" else when + offset
    fraction = (m.group(7) or "")[:9].rstrip("0")
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S")
    if when.year < 1000:  # strftime does not pad years on every platform
        stamp = f"{when.year:04d}" + stamp[stamp.index("-") :]
    return f"{stamp}.{fraction}Z" if fraction else f"{stamp}Z"


def is_canonical_ts(text: Any) -> bool:
    return type(text) is str and canonical_ts(text) == text


def ts_from_millis(ms: float) -> str | None:
    """A JavaScript epoch-milliseconds time in the canonical spelling."""
    try:
        whole = int(ms // 1000)
        millis = round(ms - whole * 1000)
        when = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=whole, milliseconds=millis)
    except (OverflowError, ValueError):
        return None
    return canonical_ts(when.strftime("%Y-%m-%dT%H:%M:%S") + f".{when.microsecond:06d}Z")


# --------------------------------------------------------------------------- I-JSON


def _pointer_token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _has_lone_surrogate(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _fix_string(s: str) -> str:
    # Python holds a lone surrogate as one code point; pairs never reach here as halves
    # because the JSON decoder joins a valid escaped pair into one character.
    return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in s)


def _string_source(s: str) -> str:
    """The JSON text of a decoded string, lone surrogates as ``\\udXXX`` escapes."""
    out = []
    for c in s:
        o = ord(c)
        if 0xD800 <= o <= 0xDFFF:
            out.append(f"\\u{o:04x}")
        elif c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif o < 0x20:
            out.append({8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(o, f"\\u{o:04x}"))
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def normalise(body: Any, *, refuse_nonfinite: bool = True) -> tuple[Any, list[dict[str, str]]]:
    """``body`` made I-JSON, and the ``normalised`` records (sorted by ``at`` as UTF-16).

    Lone surrogates become U+FFFD (``was``: the string's JSON text with the surrogate
    escaped); whole numbers failing the I-JSON test are rounded to binary64 (``was``:
    their digits). A non-finite number raises :class:`CanonicalError`: no rewrite makes
    it I-JSON and the RFC says to refuse the entry; with ``refuse_nonfinite`` false (the
    header line, which cannot be refused) it becomes ``null`` instead, unrecorded.
    """
    records: list[dict[str, str]] = []

    def walk(v: Any, at: str) -> Any:
        t = type(v)
        if t is str:
            if _has_lone_surrogate(v):
                records.append({"at": at, "was": _string_source(v)})
                return _fix_string(v)
            return v
        if t is int:
            if int_is_ijson(v):
                return v
            try:
                rounded = float(v)
            except OverflowError:
                if not refuse_nonfinite:
                    return None
                raise CanonicalError(f"{at or '/'}: number not finite in binary64") from None
            records.append({"at": at, "was": str(v)})
            return rounded
        if t is float:
            if v != v or v in (float("inf"), float("-inf")):
                if not refuse_nonfinite:
                    return None
                raise CanonicalError(f"{at or '/'}: number not finite")
            return v
        if t is dict:
            out: dict[str, Any] = {}
            for k, x in v.items():
                key = k
                if _has_lone_surrogate(k):
                    key = _fix_string(k)
                    records.append({"at": f"{at}/{_pointer_token(key)}", "was": _string_source(k)})
                out[key] = walk(x, f"{at}/{_pointer_token(key)}")
            return out
        if t is list or t is tuple:
            return [walk(x, f"{at}/{i}") for i, x in enumerate(v)]
        return v

    fixed = walk(body, "")
    records.sort(key=lambda r: r["at"].encode("utf-16-be", "surrogatepass"))
    return fixed, records
