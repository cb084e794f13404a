"""Is a file a session? Its first line says, as pi decides when it lists sessions.

pi (``SessionManager.listAll``, ``readSessionHeader``) reads a file until its first line
that parses as JSON, passing over blank and malformed lines, within the first MiB: a
session is a file whose first such line is a ``session`` header with a string ``id``;
anything else is passed over without a word. piconv does the same, and also takes
Oh-My-Pi's title line before the header, and an ASF header (the other format a
directory may hold). What the header says (id, working directory, time, the session
it was forked from) is kept: it selects sessions (``--project``, ``--since``) and links
a fork to its parent before any session is converted.
"""

from __future__ import annotations

import errno
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from .discover import NotASession, Refused, Skipped, Source, open_session

SCAN_BYTES = 1024 * 1024
"""How far into a file the header is looked for (pi's ``MAX_SESSION_HEADER_SCAN_BYTES``)."""
CHUNK = 4096
HEADER_FIELDS = ("id", "cwd", "timestamp", "parent_session")


@dataclass(frozen=True, slots=True)
class Header:
    """What a session's header says, each a string or None: ``id``, ``cwd``,
    ``timestamp`` (``timestamp``; ASF's ``created_at``) and ``parent_session`` (pi's
    ``parentSession``: the path of the session it was forked from)."""

    id: str | None = None
    cwd: str | None = None
    timestamp: str | None = None
    parent_session: str | None = None

    def to_json(self) -> dict[str, str]:
        return {k: v for k in HEADER_FIELDS if isinstance(v := getattr(self, k), str)}

    @classmethod
    def from_json(cls, value: Any) -> Header | None:
        if not isinstance(value, Mapping):
            return None
        return cls(*(value.get(k) if isinstance(value.get(k), str) else None for k in HEADER_FIELDS))


def header_of(value: Mapping[str, Any]) -> Header:
    def text(*names: str) -> str | None:
        for name in names:
            found = value.get(name)
            if isinstance(found, str):
                return found
        return None

    return Header(text("id"), text("cwd"), text("timestamp", "created_at"), text("parentSession"))


def sniff(root: str, src: Source) -> Header | Skipped | Refused:
    """The header of ``src``, or why it is not a session (:class:`Skipped`), or why it
    cannot be told (:class:`Refused`: a file that cannot be read fails, as it would
    when converted). Opened as a worker opens it (:func:`.discover.open_session`: no
    link followed, a FIFO never blocks)."""
    try:
        with open_session(root, src.open_rel or src.rel) as fh:
            first = _first_value(fh)
    except NotASession as exc:
        return Refused(src.rel, "bulk:not-a-file", exc.strerror or "not a regular file")
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return Skipped(src.rel, "not-a-session", "removed while the run looked at it")
        return Refused(src.rel, "bulk:unreadable", f"cannot read: {exc.strerror or exc}")
    if first is None:
        if src.size == 0:
            return Skipped(src.rel, "empty", "empty file: not a session")
        return Skipped(src.rel, "not-a-session", "no line that parses as JSON")
    if first is _TOO_FAR:
        return Skipped(src.rel, "not-a-session", "no line that parses as JSON in its first MiB")
    if type(first) is dict and first.get("type") == "session" and isinstance(first.get("id"), str):
        return header_of(first)
    if type(first) is dict and first.get("type") == "session":
        return Skipped(src.rel, "not-a-session", "its session header has no string id (pi passes it over)")
    kind = first.get("type") if type(first) is dict else None
    what = f'{{"type": {json.dumps(kind)}, …}}' if isinstance(kind, str) else type(first).__name__
    return Skipped(src.rel, "not-a-session", f"its first line is {what}, not a session header")


_TOO_FAR = object()


def _first_value(fh: Any) -> Any:
    """The first line of ``fh`` that parses as JSON, past Oh-My-Pi's title line; None for
    a file with none (empty, or only blank and malformed lines); ``_TOO_FAR`` when none
    is found in the first :data:`SCAN_BYTES`."""
    pending = bytearray()  # the line being read: only each new chunk is searched
    read = 0
    title_seen = False
    while True:
        chunk = fh.read(CHUNK) if read < SCAN_BYTES else b""
        read += len(chunk)
        searched = len(pending)
        pending += chunk
        lines = []
        while (end := pending.find(b"\n", searched)) >= 0:
            lines.append(bytes(pending[:end]))
            del pending[: end + 1]
            searched = 0
        if not chunk and pending:
            lines.append(bytes(pending))  # the last line, without a newline
            pending.clear()
        for raw in lines:
            value = _parse(raw)
            if value is _SKIP:
                continue
            if not title_seen and type(value) is dict and value.get("type") == "title":
                title_seen = True  # Oh-My-Pi's title line: the header follows
                continue
            return value
        if not chunk:
            if read >= SCAN_BYTES and fh.read(1):
                return _TOO_FAR
            return None


_SKIP = object()


def _parse(raw: bytes) -> Any:
    line = raw.strip()
    if line.startswith(b"\xef\xbb\xbf"):
        line = line[3:]
    if not line:
        return _SKIP
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        try:  # orjson refuses a lone surrogate escape, which the readers keep
            return json.loads(line)
        except (ValueError, RecursionError):
            return _SKIP
