"""What a session list and a usage report need of a pi session, read without building the
whole document: the header, the name, the first prompt and every counted entry
(:class:`piconv.facts.SessionScan`), as :func:`piconv.facts.scan_document` takes them from
the document.

pi writes each entry's keys in one order: ``type``, ``id``, ``parentId``, ``timestamp``,
then the rest, and an assistant message's ``content`` before its ``api``, ``provider``,
``model`` and ``usage``. So the head of a line says what the entry is, and the tail of an
assistant message holds all a report needs of it: most lines are never parsed whole (a
tool result holding a file is not parsed at all). Each call's usage goes through pi's own
values, as pi's mapping keeps them, into :func:`piconv.facts.call_spend`, the function the
document's path uses (:func:`piconv.facts.spending.spend`).

Anything this fast path does not expect gives ``None``, and the caller reads the whole
document instead: a session of version 1 or 2 (ids made by migration), Oh-My-Pi's title
line, a line that is not JSON or not an object, a line nested deeper than the reader
allows, an id used twice, a parent that does not come before its child. The test suite
holds the two paths equal on every corpus session and on hostile ones.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import orjson

from ..facts.scan import SessionScan
from ..facts.spending import Spend, call_spend, model_key, turn
from ..facts.titles import TITLE_CHARS, clean_title
from ..jsonl import MAX_DEPTH, MAX_LINE_BYTES, depth_over

_STRING = rb'([^"\\\x00-\x1f]*)"'  # a JSON string without escapes (a control character is no JSON)
_HEAD = re.compile(
    rb'\{"type":"([A-Za-z_]+)","id":"'
    + _STRING
    + rb',"parentId":(?:null|"'
    + _STRING
    + rb'),"timestamp":"'
    + _STRING
    + rb'(?:,"message":\{"role":"([A-Za-z]+)")?'
)
_CONTENT_LIST = b',"content":['
_TAIL = b'],"api":"'
_PARENT_KEY = b'"parentId":'
"""Once in an entry's line (a string's quotes are escaped): twice, the line may hold two
entries, which the reader refuses."""
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"{[")
_USAGE_KINDS = frozenset({"compaction", "branch_summary", "usage"})
_SILENT_TYPES = frozenset({b"custom", b"custom_message", b"label", b"thinking_level_change", b"context_edit"})
"""Entry types that count for nothing and name no model: only their id and parent matter."""
_SILENT_ROLES = frozenset({b"system", b"bashExecution", b"custom"})
_USAGE = b'"usage"'
_RUN = b'"runId"'


class _Irregular(Exception):
    """The fast path does not cover this file: read the whole document."""


def scan(data: bytes, options: Mapping[str, Any] | None = None) -> SessionScan | None:
    """The :class:`SessionScan` of a pi session's bytes, or None when the file is not the
    regular shape this reads (the caller then reads the whole document)."""
    try:
        return _Scan().run(data)
    except _Irregular:
        return None


def _loads(line: bytes) -> Any:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:  # orjson refuses a lone surrogate escape, which the reader keeps
            value = json.loads(line)
        except (ValueError, RecursionError):
            raise _Irregular from None
    if type(value) is not dict:
        raise _Irregular
    if (
        len(line) > MAX_DEPTH
        and line.count(b"{") + line.count(b"[") > MAX_DEPTH
        and depth_over(value, MAX_DEPTH)
    ):
        raise _Irregular  # deeper than the reader allows: it drops the line
    return value


def _spend(
    entry_id: bytes, stamp: bytes | None, kind: str, model: str | None, usage: dict[str, Any]
) -> Spend:
    """A call's :class:`Spend` from pi's ``usage`` object. pi's mapping keeps a number
    (int or float) and nothing else, and :func:`piconv.facts.call_spend` counts only a
    count of zero or more and a finite cost: the raw values give what the mapped ones do."""
    cost = usage.get("cost")
    if type(cost) is dict:
        cost_total: Any = cost.get("total")
        parts: tuple[Any, ...] | None = (
            cost.get("input"),
            cost.get("output"),
            cost.get("cacheRead"),
            cost.get("cacheWrite"),
        )
    else:
        cost_total, parts = None, None
    counts = (usage.get("input"), usage.get("output"), usage.get("cacheRead"), usage.get("cacheWrite"))
    return call_spend(
        _decode(entry_id) or "",
        _decode(stamp),
        kind,
        model,
        counts,
        usage.get("totalTokens"),
        cost_total,
        parts,
    )


def _decode(raw: bytes | None) -> str | None:
    if raw is None:
        return None
    try:
        return raw.decode()
    except UnicodeDecodeError:
        raise _Irregular from None  # not UTF-8: the reader reports the line


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _text(value: Any) -> str | None:
    return value if type(value) is str else None


class _Scan:
    """One file's scan. Ids are kept as the bytes of the file (UTF-8) until a counted
    entry needs its id as text."""

    __slots__ = ("models", "name", "parents", "runs", "spends", "stamps", "users")

    def __init__(self) -> None:
        self.spends: list[Spend] = []
        self.parents: dict[bytes, bytes | None] = {}
        self.users: dict[bytes, dict[str, Any]] = {}  # a user message's id -> the message
        self.models: dict[str, None] = {}
        self.runs: dict[str, None] = {}
        self.stamps: list[bytes] = []
        self.name: str | None = None

    def run(self, data: bytes) -> SessionScan:
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        lines = data.split(b"\n")
        if b"\r" in data:  # CRLF line ends (a raw CR is no JSON anywhere else)
            lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
        if len(data) > MAX_LINE_BYTES and max(map(len, lines)) > MAX_LINE_BYTES:
            raise _Irregular  # the reader refuses so long a line
        header: dict[str, Any] | None = None
        start = 0
        for start, line in enumerate(lines):  # noqa: B007 (the header's line is wanted after the loop)
            if line and not line.isspace():
                header = _loads(line)
                break
        if header is None or header.get("type") != "session" or header.get("version") != 3:
            raise _Irregular  # a title line first, no header, or ids still to be made
        if type(header.get("id")) is not str:
            raise _Irregular
        last_id: bytes | None = None
        entry = self.entry
        # The line after the last newline is parsed whole: it may be cut short (pi stopped).
        for line in lines[start + 1 : -1]:
            if line[:1] == b"{":
                last_id = entry(line)
            elif line and not line.isspace():
                last_id = self.parsed(_loads(line), line)
        tail = lines[-1] if len(lines) > start + 1 else b""
        if tail and not tail.isspace():
            last_id = self.parsed(_loads(tail), tail)
        if header is None:
            raise _Irregular
        created = _text(header.get("timestamp"))
        updated = _decode(max(self.stamps)) if self.stamps else created
        return SessionScan(
            header["id"],
            _text(header.get("cwd")),
            created,
            _text(header.get("parentSession")),
            self.name,
            None,
            self.first_prompt(last_id),
            updated,
            tuple(self.models),
            tuple(self.spends),
            tuple(self.runs),
        )

    def entry(self, line: bytes) -> bytes:
        """One entry line: most are told from their head alone. A line that does not end
        its object, or that may hold a second entry (two appends glued), is parsed whole."""
        head = _HEAD.match(line)
        if head is None or not line.endswith(b"}") or line.find(_PARENT_KEY, head.end()) >= 0:
            return self.parsed(_loads(line), line)
        kind, entry_id, parent_id, stamp, role = head.groups()
        if (
            kind == b"message"
            and role != b"assistant"
            and role not in _SILENT_ROLES
            and (role != b"toolResult" or _USAGE in line or _RUN in line)
        ):
            return self.parsed(_loads(line), line)  # a user's message, a tool result's usage...
        parents = self.parents
        if entry_id in parents or (parent_id is not None and parent_id not in parents):
            raise _Irregular  # an id used twice, or a parent yet to come: the reader repairs those
        parents[entry_id] = parent_id
        self.stamps.append(stamp)
        if role == b"assistant":
            self.assistant(entry_id, stamp, line, head.end())
        elif kind not in _SILENT_TYPES and kind != b"message":
            self.typed(entry_id, stamp, _loads(line))
        return entry_id

    def parsed(self, value: dict[str, Any], line: bytes) -> bytes:
        """An entry parsed whole: any type, any key order."""
        raw_id, raw_parent = value.get("id"), value.get("parentId")
        if type(raw_id) is not str or (raw_parent is not None and type(raw_parent) is not str):
            raise _Irregular
        entry_id = _encode(raw_id)
        parent_id = _encode(raw_parent) if raw_parent is not None else None
        parents = self.parents
        if entry_id in parents or (parent_id is not None and parent_id not in parents):
            raise _Irregular
        parents[entry_id] = parent_id
        raw_stamp = value.get("timestamp")
        stamp = _encode(raw_stamp) if type(raw_stamp) is str else None
        if stamp is not None:
            self.stamps.append(stamp)
        if value.get("type") == "message":
            message = value.get("message")
            self.message_value(entry_id, stamp, message)
            if type(message) is dict and message.get("role") == "user":
                self.users[entry_id] = message
        else:
            self.typed(entry_id, stamp, value)
        return entry_id

    def typed(self, entry_id: bytes, stamp: bytes | None, value: dict[str, Any]) -> None:
        """An entry other than a message."""
        kind = value.get("type")
        if kind in _USAGE_KINDS:
            usage = value.get("usage")
            if type(usage) is dict:
                model = model_key(value.get("provider"), value.get("model")) if kind == "usage" else None
                self.spends.append(_spend(entry_id, stamp, kind, model, usage))
        elif kind == "session_info":
            name = value.get("name")
            self.name = (name.strip() or None) if type(name) is str else None
        elif kind == "model_change":
            model = value.get("modelId")
            if type(model) is str and model:
                self.models[model_key(value.get("provider"), model) or model] = None
        elif kind == "session":
            raise _Irregular  # a second header: the reader decides what it is

    def assistant(self, entry_id: bytes, stamp: bytes, line: bytes, after_head: int) -> None:
        """An assistant message from its tail: the object after its ``content`` holds its
        model and usage. A line whose shape differs, that may nest deeper than the reader
        allows, or that may hold two entries is parsed whole."""
        end = len(line.rstrip())
        at = line.rfind(_TAIL)
        if (
            at > after_head
            and line.startswith(_CONTENT_LIST, after_head)
            and line[end - 2 : end] == b"}}"
            and len(line.translate(None, _NOT_BRACKETS)) <= MAX_DEPTH
        ):
            try:
                tail = orjson.loads(b"{" + line[at + 2 : end - 1])
            except orjson.JSONDecodeError:
                pass
            else:
                self.assistant_fields(entry_id, stamp, tail)
                return
        self.message_value(entry_id, stamp, _loads(line).get("message"))

    def assistant_fields(self, entry_id: bytes, stamp: bytes | None, message: dict[str, Any]) -> None:
        provider, model = message.get("provider"), message.get("model")
        if type(model) is str and model:
            self.models[model_key(provider, model) or model] = None
        usage = message.get("usage")
        if type(usage) is dict:
            response = _text(message.get("responseModel"))
            self.spends.append(
                _spend(entry_id, stamp, "assistant", model_key(provider, response or model), usage)
            )

    def message_value(self, entry_id: bytes, stamp: bytes | None, message: Any) -> None:
        if type(message) is not dict:
            return
        role = message.get("role")
        if role == "user":
            self.spends.append(turn(_decode(entry_id), _decode(stamp)))
        elif role == "assistant":
            self.assistant_fields(entry_id, stamp, message)
        elif role == "toolResult":
            usage = message.get("usage")
            if type(usage) is dict:
                self.spends.append(_spend(entry_id, stamp, "tool", None, usage))
            details = message.get("details")
            run = details.get("runId") if type(details) is dict else None
            if type(run) is str and run:
                self.runs[run] = None

    def first_prompt(self, leaf: bytes | None) -> str | None:
        """The first user text along the path to ``leaf`` (the last entry)."""
        if leaf is None or not self.users:
            return None
        path = []
        parents = self.parents
        at: bytes | None = leaf
        while at is not None:
            path.append(at)
            at = parents[at]
        for entry_id in reversed(path):
            message = self.users.get(entry_id)
            if message is None:
                continue
            content = message.get("content")
            if type(content) is str:
                text = content
            elif type(content) is list and content:
                text = " ".join(
                    p["text"]
                    for p in content
                    if type(p) is dict and p.get("type") == "text" and _text(p.get("text"))
                )
            else:
                continue
            text = clean_title(text)
            if text:
                return text[:TITLE_CHARS]
        return None
