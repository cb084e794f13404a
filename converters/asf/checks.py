"""Fast checks shared by the validator and the writer: the schema's common shapes in
plain Python, and ancestry queries in logarithmic time.

:func:`proven_valid` says ``True`` only when an entry line certainly matches the JSON
Schema (``schema/asf.schema.json``): it checks exactly what the schema requires of the
entry types and items piconv writes and of the common Open Responses shapes (``item``,
``response``, ``config``, ``compaction``, ``branch_summary``, ``label``, ``info``,
``custom``, namespaced types; message, function call, function call output, reasoning and
namespaced items). Anything else (the header, ``parents``, record entries, an ``integer``
written as ``1.0``, subclasses of the JSON types...) gives ``False``, and the caller asks
jsonschema, which also words the problems. ``tests/test_asf_fastcheck.py`` holds the two
to agreement on every corpus output and on mutated entries.

``_checks.c`` (optional, built by setup.py) is the same predicate in C for the writer's
lines; it may only say ``True`` where :func:`proven_valid_python` does, and is asked first.

:class:`Ancestry` answers "is A on the path from B to its root?" with one jump pointer
per entry (Myers' skew-binary scheme): O(1) to add an entry, O(log depth) per question.
"""

from __future__ import annotations

import os
import re
from importlib import resources
from typing import Any

import orjson

__all__ = ["Ancestry", "header_proven_valid", "proven_valid", "proven_valid_python"]


def _schema_patterns() -> tuple[str, str, str]:
    # The very patterns of the schema, compiled the way jsonschema does (re.search).
    schema = orjson.loads(resources.files(__package__).joinpath("schema/asf.schema.json").read_bytes())
    defs = schema["$defs"]
    namespaced = defs["entry"]["allOf"][-1]["then"]["properties"]["type"]["pattern"]
    assert defs["item"]["allOf"][-1]["then"]["properties"]["type"]["pattern"] == namespaced
    return defs["hash"]["pattern"], defs["ts"]["pattern"], namespaced


_HASH_P, _TS_P, _NS_P = _schema_patterns()
_hash = re.compile(_HASH_P).search
_ts = re.compile(_TS_P).search
_ns = re.compile(_NS_P).search

def _header_schema() -> dict[str, Any]:
    schema = orjson.loads(resources.files(__package__).joinpath("schema/asf.schema.json").read_bytes())
    header = schema["$defs"]["header"]
    # header_proven_valid knows exactly these members; a schema that changes them must
    # change it too (the test suite fails at import otherwise).
    assert sorted(header["required"]) == ["created_at", "format", "id", "payload", "type"]
    assert set(header["properties"]) == {
        "type", "format", "id", "created_at", "payload", "harness", "records", "cwd",
        "parent_session", "base", "spawned_by", "media", "redacted",
    }
    assert "additionalProperties" not in header and header["properties"]["base"] == {"$ref": "#/$defs/hash"}
    return header["properties"]


_HEADER = _header_schema()
_format = re.compile(_HEADER["format"]["pattern"]).search
_created = re.compile(_HEADER["created_at"]["pattern"]).search
_payload = re.compile(_HEADER["payload"]["pattern"]).search
_MEDIA = tuple(_HEADER["media"]["enum"])
assert all(type(m) is str for m in _MEDIA) and _HEADER["id"].get("minLength") == 1


def header_proven_valid(v: Any) -> bool:
    """``True`` only if the header line ``v`` certainly matches the schema's header (so
    jsonschema need not be imported for it); ``False``: not proven."""
    if type(v) is not dict or v.get("type") != "session":
        return False
    get = v.get
    fmt, entry_id, created, payload = get("format"), get("id"), get("created_at"), get("payload")
    if not (
        type(fmt) is str and _format(fmt) is not None
        and type(entry_id) is str and len(entry_id) >= 1
        and type(created) is str and _created(created) is not None
        and type(payload) is str and _payload(payload) is not None
    ):
        return False
    harness = get("harness", _MISSING)
    if harness is not _MISSING:
        if type(harness) is not dict:
            return False
        for key in ("name", "version"):
            if key in harness and type(harness[key]) is not str:
                return False
    records = get("records", _MISSING)
    if records is not _MISSING and not (type(records) is list and all(type(r) is str for r in records)):
        return False
    for key in ("cwd", "parent_session", "spawned_by"):
        if key in v and type(v[key]) is not str:
            return False
    if "base" in v and not _is_hash(v["base"]):
        return False
    if "media" in v and not (type(v["media"]) is str and v["media"] in _MEDIA):
        return False
    return "redacted" not in v or type(v["redacted"]) is bool


_STATUS = frozenset(("in_progress", "completed", "incomplete"))
_ROLES = frozenset(("user", "assistant", "system", "developer"))
_TEXTY = frozenset(("input_text", "output_text", "text", "summary_text", "reasoning_text", "refusal"))
_CORE_TYPES = frozenset(
    ("item", "response", "config", "compaction", "branch_summary", "run", "dispatch", "decision",
     "queued", "label", "info", "env", "outcome", "link", "custom")
)
_CORE_ITEMS = frozenset(("message", "function_call", "function_call_output", "reasoning", "compaction", "item_reference"))
_MISSING = object()


def _is_hash(x: Any) -> bool:
    return type(x) is str and _hash(x) is not None


def _opt(v: dict[str, Any], key: str, t: type) -> bool:
    x = v.get(key, _MISSING)
    return x is _MISSING or type(x) is t


def _opt_or_null(v: dict[str, Any], key: str, t: type) -> bool:
    x = v.get(key, _MISSING)
    return x is _MISSING or x is None or type(x) is t


def _count(v: dict[str, Any], key: str) -> bool:
    x = v.get(key, _MISSING)
    return x is _MISSING or (type(x) is int and x >= 0)


def _part(p: Any) -> bool:
    if type(p) is not dict:
        return False
    t = p.get("type", _MISSING)
    if type(t) is not str:
        return False
    if t in _TEXTY:
        if not (_opt(p, "text", str) and _opt(p, "refusal", str)):
            return False
        if t == "input_text":
            return "text" in p
        if t == "output_text":
            return "text" in p and _opt(p, "annotations", list)
        return True
    if t == "input_image":
        return _opt_or_null(p, "image_url", str) and _opt_or_null(p, "file_id", str) and _opt(p, "detail", str)
    return True


def _content(c: Any) -> bool:
    t = type(c)
    if t is str:
        return True
    if t is not list:
        return False
    for p in c:  # noqa: SIM110  (a loop is cheaper than all() over a generator)
        if not _part(p):
            return False
    return True


def _item(it: Any) -> bool:
    if type(it) is not dict:
        return False
    t = it.get("type", _MISSING)
    if type(t) is not str:
        return False
    if t == "message":
        role = it.get("role", _MISSING)
        status = it.get("status", _MISSING)
        return (
            type(role) is str and role in _ROLES
            and "content" in it and _content(it["content"])
            and _opt(it, "id", str)
            and (status is _MISSING or (type(status) is str and status in _STATUS))
        )
    if t == "function_call" or t == "function_call_output":
        call_id = it.get("call_id", _MISSING)
        status = it.get("status", _MISSING)
        if not (type(call_id) is str and len(call_id) >= 1 and _opt(it, "id", str)
                and (status is _MISSING or (type(status) is str and status in _STATUS))):
            return False
        if t == "function_call":
            return type(it.get("name")) is str and type(it.get("arguments")) is str
        return "output" in it and _content(it["output"])
    if t == "reasoning":
        summary = it.get("summary", _MISSING)
        if type(summary) is not list or not all(_part(p) for p in summary):
            return False
        content = it.get("content", _MISSING)
        if content is not _MISSING and content is not None and (
            type(content) is not list or not all(_part(p) for p in content)
        ):
            return False
        return _opt(it, "id", str) and _opt_or_null(it, "encrypted_content", str)
    if t in _CORE_ITEMS:
        return False  # compaction / item_reference items: jsonschema decides
    return _ns(t) is not None


def _usage(u: Any) -> bool:
    if type(u) is not dict:
        return False
    if not (_count(u, "input_tokens") and _count(u, "output_tokens") and _count(u, "total_tokens")):
        return False
    d = u.get("input_tokens_details", _MISSING)
    if d is not _MISSING and (type(d) is not dict or not _count(d, "cached_tokens")):
        return False
    d = u.get("output_tokens_details", _MISSING)
    return d is _MISSING or (type(d) is dict and _count(d, "reasoning_tokens"))


def _tool(t: Any) -> bool:
    return (
        type(t) is dict
        and type(t.get("type", _MISSING)) is str
        and _opt(t, "name", str)
        and _opt_or_null(t, "description", str)
        and _opt_or_null(t, "parameters", dict)
        and _opt_or_null(t, "strict", bool)
    )


def _list_of(v: dict[str, Any], key: str, check: Any) -> bool:
    x = v.get(key, _MISSING)
    if x is _MISSING:
        return True
    if type(x) is not list:
        return False
    for e in x:  # noqa: SIM110
        if not check(e):
            return False
    return True


def _is_dict(x: Any) -> bool:
    return type(x) is dict


def _is_str(x: Any) -> bool:
    return type(x) is str


def _omit(o: Any) -> bool:
    return type(o) is dict and _opt(o, "reasoning", str) and _list_of(o, "items", _is_str)


def _settings_common(s: dict[str, Any]) -> bool:
    return (
        _opt(s, "model", str)
        and _opt(s, "instructions", str)
        and _opt_or_null(s, "reasoning", dict)
        and _opt_or_null(s, "text", dict)
        and _list_of(s, "instructions_parts", _is_dict)
        and ("omit" not in s or _omit(s["omit"]))
        and _opt(s, "extra", dict)
    )


def _settings(s: Any) -> bool:
    return (
        type(s) is dict
        and _settings_common(s)
        and _list_of(s, "tools", _tool)
        and _list_of(s, "instructions_omitted", _is_dict)
    )


def _config(v: dict[str, Any]) -> bool:
    omitted = v.get("instructions_omitted", _MISSING)
    return (
        _settings_common(v)
        and (omitted is None or _list_of(v, "instructions_omitted", _is_dict))
        and _list_of(v, "tools_added", _tool)
        and _list_of(v, "tools_removed", _is_str)
        and _opt(v, "replace", bool)
    )


def _normalised(v: dict[str, Any]) -> bool:
    records = v.get("normalised", _MISSING)
    if records is _MISSING:
        return True
    if type(records) is not list:
        return False
    for r in records:
        if not (type(r) is dict and type(r.get("at", _MISSING)) is str and _opt(r, "was", str) and _opt(r, "raw", str)):
            return False
    return True


def proven_valid_python(v: Any) -> bool:
    """``True`` only if the entry line ``v`` certainly matches the schema; ``False``:
    not proven (invalid, or a shape this fast path leaves to jsonschema)."""
    if type(v) is not dict:
        return False
    get = v.get
    t = get("type", _MISSING)
    if type(t) is not str or t == "session" or "content" in v or "parents" in v:
        return False
    entry_id = get("id")
    parent = get("parent", _MISSING)
    ts = get("ts")
    legacy = get("legacy_id", _MISSING)
    if not (
        type(entry_id) is str and _hash(entry_id) is not None
        and (parent is None or (type(parent) is str and _hash(parent) is not None))
        and type(ts) is str and _ts(ts) is not None
        and (legacy is _MISSING or type(legacy) is str)
        and ("normalised" not in v or _normalised(v))
    ):
        return False
    if t == "item":
        response = get("response", _MISSING)
        visible = get("visible", _MISSING)
        return (
            "item" in v and _item(v["item"])
            and (response is _MISSING or type(response) is str)
            and (visible is _MISSING or type(visible) is bool)
            and ("source" not in v or type(v["source"]) is dict)
            and ("queued_from" not in v or _is_hash(v["queued_from"]))
        )
    if t == "response":
        usage = get("usage", _MISSING)
        return (
            _opt(v, "response_id", str)
            and _opt(v, "model", str)
            and _opt(v, "status", str)
            and (usage is _MISSING or usage is None or _usage(usage))
            and _opt_or_null(v, "incomplete", dict)
            and _opt_or_null(v, "error", dict)
            and "request_hash" not in v and "latency_ms" not in v and "attempts" not in v  # jsonschema decides
        )
    if t == "config":
        return _config(v)
    if t == "compaction":
        return (
            _is_hash(v.get("first_kept"))
            and "summary" in v and _item(v["summary"])
            and _list_of(v, "pinned", _item)
            and ("config" not in v or _settings(v["config"]))
            and _count(v, "tokens_before")
            and ("usage" not in v or _usage(v["usage"]))
        )
    if t == "branch_summary":
        return (
            _is_hash(v.get("from"))
            and "summary" in v and _item(v["summary"])
            and ("usage" not in v or _usage(v["usage"]))
        )
    if t == "label":
        label = v.get("label", _MISSING)
        return _is_hash(v.get("target")) and (label is None or type(label) is str) and _opt(v, "synthetic", bool)
    if t == "info":
        return _opt_or_null(v, "name", str)
    if t == "custom":
        ns = v.get("ns", _MISSING)
        return type(ns) is str and len(ns) >= 1 and "data" in v and _opt(v, "call_id", str)
    if t in _CORE_TYPES:
        return False  # run, dispatch, decision, queued, env, outcome, link: jsonschema decides
    return _ns(t) is not None


def _accelerator() -> Any:
    """``_checks.proven_valid`` (C) when it was built, ``PICONV_PURE_PYTHON`` is not set and
    it was written for these very patterns and name sets; else ``None``."""
    if os.environ.get("PICONV_PURE_PYTHON"):
        return None
    try:
        from . import _checks
    except ImportError:  # no C compiler at install time
        return None
    names = {
        "STATUS": _STATUS,
        "ROLES": _ROLES,
        "TEXTY": _TEXTY,
        "CORE_TYPES": _CORE_TYPES,
        "CORE_ITEMS": _CORE_ITEMS,
    }
    c_names = {k: frozenset(v) for k, v in _checks.NAMES.items()}
    if _checks.PATTERNS != (_HASH_P, _TS_P, _NS_P) or c_names != names:
        return None  # the schema or this module moved on: the C copy no longer applies
    return _checks.proven_valid


_c_proven_valid = _accelerator()


def proven_valid(v: Any) -> bool:
    """:func:`proven_valid_python`, asking the C predicate first: it says ``True`` only
    where the Python one does, and its ``False`` is checked here, so the answer is always
    the Python predicate's."""
    return (_c_proven_valid is not None and _c_proven_valid(v)) or proven_valid_python(v)


class Ancestry:
    """Entries added parent first; ``on_path(a, b)``: is ``a`` ``b`` or an ancestor of it?

    Each entry keeps ``(parent, depth, jump)``; ``jump`` skips up by the skew-binary
    rule, so a walk up to any depth takes O(log depth) steps. An entry whose parent is
    not (yet) an entry counts as a root here; ``orphans`` says whether any was added,
    so a caller that must follow such unknown parents knows to walk instead.
    """

    __slots__ = ("nodes", "orphans")

    def __init__(self) -> None:
        self.nodes: dict[str, tuple[str | None, int, str]] = {}
        self.orphans = False

    def __contains__(self, node: object) -> bool:
        return node in self.nodes

    def __len__(self) -> int:
        return len(self.nodes)

    def add(self, node: str, parent: str | None) -> None:
        nodes = self.nodes
        p = nodes.get(parent) if parent is not None else None  # type: ignore[arg-type]
        if p is None:
            if parent is not None:
                self.orphans = True
            nodes[node] = (parent, 0, node)
            return
        depth = p[1]
        jump = p[2]
        j = nodes[jump]
        jj = j[2]
        if depth - j[1] == j[1] - nodes[jj][1]:
            nodes[node] = (parent, depth + 1, jj)
        else:
            nodes[node] = (parent, depth + 1, parent)  # type: ignore[arg-type]

    def on_path(self, a: str, b: str | None) -> bool:
        nodes = self.nodes
        if b is None:
            return False
        n = nodes.get(b)
        na = nodes.get(a)
        if n is None or na is None:
            return a == b
        target = na[1]
        v = b
        while n[1] > target:
            j = n[2]
            v = j if nodes[j][1] >= target else n[0]  # type: ignore[assignment]
            n = nodes[v]
        return v == a
