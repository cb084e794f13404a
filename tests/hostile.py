"""Hostile pi sessions for the fuzz tests (tests/test_fuzz.py), and the checks every
conversion of one must pass.

A session is drawn as a list of lines. Most are entries of pi's kinds whose every member
may hold a value of the wrong type, a lone UTF-16 surrogate escape, a number beyond the
double range or past 64 bits, markup, deep nesting or nothing at all; ids come from a
small pool so trees branch, parents dangle and ids repeat. Some lines are not entries at
all (not JSON, not an object, glued objects, blank, a NUL byte, bytes that are not UTF-8),
the file may open with a BOM or use CRLF, and its last line may be cut short.

Numbers JSON can hold but Python's encoder cannot write (``1e400``, ``-1e400``) are
drawn as :class:`Raw` and spliced into the text as written.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st


@dataclass(frozen=True)
class Raw:
    """A JSON number written exactly as ``text``."""

    text: str


_RAW = re.compile(r'"\\u0000raw:([^"]*)"')


def dumps(value: Any) -> bytes:
    """``value`` as one line of JSON: lone surrogates escaped, :class:`Raw` numbers spliced."""

    def prepare(v: Any) -> Any:
        if isinstance(v, Raw):
            return "\x00raw:" + v.text
        if isinstance(v, dict):
            return {k: prepare(x) for k, x in v.items()}
        if isinstance(v, list):
            return [prepare(x) for x in v]
        return v

    text = json.dumps(prepare(value), ensure_ascii=True, separators=(",", ":"))
    return _RAW.sub(lambda m: m.group(1), text).encode()


# --------------------------------------------------------------------------- hostile values

LONE = "\ud800"
strings = st.sampled_from(
    [
        "",
        "x",
        " ",
        "hi \ud83d\ude00",
        f"half {LONE} a pair",
        "\udc00",
        "<script>alert(1)</script>",
        "](javascript:alert(1))",
        "---\nname: x\n---",
        "```\n~~~",
        "\x1b[31mred\x00",
        "a" * 300,
        "\u2028\u2029\ufeff",
        "toolu_01|" + "i" * 60,
    ]
) | st.text(max_size=8)
numbers = st.sampled_from(
    [
        0,
        -1,
        1,
        7,
        2**53 + 1,
        2**64,
        -(2**70),
        1.5,
        -0.0,
        1e300,
        5e-324,
        Raw("1e400"),
        Raw("-1e400"),
        Raw("1E+999"),
    ]
) | st.integers(-10, 10**6)
scalars = st.none() | st.booleans() | numbers | strings


def _deep(depth: int) -> Any:
    value: Any = "bottom"
    for n in range(depth):
        value = [value] if n % 2 else {"d": value}
    return value


deep = st.sampled_from([20, 150, 199, 201, 260]).map(_deep)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(strings, children, max_size=3),
    max_leaves=6,
)
anything = scalars | json_values | deep


def member(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A member's value: usually of its documented type, often anything at all."""
    return st.one_of(good, good, anything)


MISSING = object()


@st.composite
def obj(draw: st.DrawFn, fields: dict[str, st.SearchStrategy[Any]], **fixed: Any) -> dict[str, Any]:
    """An object with ``fixed`` members, a random subset of ``fields`` (each value from
    :func:`member`) and sometimes an unknown member."""
    out = dict(fixed)
    for key, good in fields.items():
        if draw(st.integers(0, 5)) == 0:
            continue  # absent
        out[key] = draw(member(good))
    if draw(st.integers(0, 4)) == 0:
        out[draw(st.sampled_from(["mystery", "__proto__", "constructor", "x-y"]))] = draw(anything)
    return out


# --------------------------------------------------------------------------- pi's shapes

ids = st.sampled_from(["a", "b", "c", "d", "e", "f", "a", "b", "", "toolu_01|" + "z" * 50])
call_ids = st.sampled_from(["call_1", "call_2", "toolu_01|" + "y" * 450, "", "call 1"])
tool_names = st.sampled_from(["read", "bash", "edit", "", "<b>x</b>"])
timestamps = st.sampled_from(["2026-01-01T00:00:00.000Z", "2026-13-45T99:99:99Z", "", "yesterday"])
numbers_ok = st.integers(0, 10**6) | st.sampled_from([Raw("1e400"), -5, 1.5])

usage = obj(
    {
        "input": numbers_ok,
        "output": numbers_ok,
        "cacheRead": numbers_ok,
        "cacheWrite": numbers_ok,
        "totalTokens": numbers_ok,
        "cost": obj({k: numbers_ok for k in ("input", "output", "cacheRead", "cacheWrite", "total")}),
    }
)
schema_values = st.sampled_from(
    [
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        {"type": "object"},
        {},
        [],
        "object",
        None,
    ]
)
tool_spec = obj({"name": tool_names, "description": strings, "parameters": schema_values})

parts = st.one_of(
    obj({"text": strings, "textSignature": strings}, type="text"),
    obj({"thinking": strings, "thinkingSignature": strings, "redacted": st.booleans()}, type="thinking"),
    obj(
        {"id": call_ids, "name": tool_names, "arguments": json_values, "thoughtSignature": strings},
        type="toolCall",
    ),
    obj(
        {
            "data": st.sampled_from(["aGk=", "", "not base64!"]),
            "mimeType": st.sampled_from(["image/png", "text/html", ""]),
        },
        type="image",
    ),
    obj({"type": st.sampled_from(["video", "", "toolResult"])}),
    anything,
)
content = st.one_of(strings, st.lists(parts, max_size=4), anything)

messages = st.one_of(
    obj({"content": content, "timestamp": numbers_ok}, role="user"),
    obj(
        {
            "content": content,
            "provider": st.sampled_from(["openai", "anthropic", "faux"]),
            "model": st.sampled_from(["gpt-4o", "claude-x", "faux-coder"]),
            "api": st.sampled_from(["openai-completions", "anthropic-messages"]),
            "usage": usage,
            "stopReason": st.sampled_from(["stop", "toolUse", "error", "aborted", "length", "odd"]),
            "errorMessage": strings,
            "timestamp": numbers_ok,
        },
        role="assistant",
    ),
    obj(
        {
            "toolCallId": call_ids,
            "toolName": tool_names,
            "content": content,
            "isError": st.booleans(),
            "details": json_values,
            "timestamp": numbers_ok,
        },
        role="toolResult",
    ),
    obj(
        {
            "content": content,
            "sections": st.dictionaries(
                st.sampled_from(["preamble", "tools", "x"]), st.none() | strings, max_size=3
            ),
            "toolsAdded": st.lists(tool_spec, max_size=3),
            "toolsRemoved": st.lists(tool_spec, max_size=2),
        },
        role="system",
    ),
    obj(
        {
            "command": strings,
            "output": strings,
            "exitCode": numbers_ok,
            "cancelled": st.booleans(),
            "truncated": st.booleans(),
            "fullOutputPath": strings,
            "excludeFromContext": st.booleans(),
        },
        role="bashExecution",
    ),
    obj(
        {"customType": strings, "content": content, "display": st.booleans(), "details": json_values},
        role="custom",
    ),
    obj({"summary": strings, "tokensBefore": numbers_ok, "fromId": ids}, role="branchSummary"),
    obj({"summary": strings, "tokensBefore": numbers_ok}, role="compactionSummary"),
    obj({"content": content}, role="alien"),
    anything,
)

bodies: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "message": obj({"message": messages}),
    "compaction": obj(
        {
            "summary": strings,
            "firstKeptEntryId": ids,
            "firstKeptEntryIndex": numbers_ok,
            "tokensBefore": numbers_ok,
            "details": json_values,
            "fromHook": st.booleans(),
        }
    ),
    "branch_summary": obj(
        {"fromId": ids, "summary": strings, "details": json_values, "fromHook": st.booleans()}
    ),
    "model_change": obj(
        {"provider": st.sampled_from(["openai", "anthropic"]), "modelId": st.sampled_from(["gpt-4o", "x"])}
    ),
    "thinking_level_change": obj({"thinkingLevel": st.sampled_from(["off", "high", "insane"])}),
    "label": obj({"targetId": ids, "label": strings}),
    "session_info": obj({"name": strings}),
    "custom": obj({"customType": strings, "data": json_values}),
    "custom_message": obj(
        {"customType": strings, "content": content, "display": st.booleans(), "details": json_values}
    ),
    "context_edit": obj(
        {"targetId": ids, "replacement": st.none() | st.fixed_dictionaries({"content": content}) | anything}
    ),
    "usage": obj({"kind": strings, "provider": strings, "model": strings, "usage": usage, "note": strings}),
    "mystery": obj({"payload": anything}),
}


@st.composite
def entry(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(sorted(bodies)))
    out: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        out["type"] = kind
    else:
        out["type"] = draw(anything)
    if draw(st.integers(0, 9)):
        out["id"] = draw(member(ids))
    if draw(st.integers(0, 9)):
        out["parentId"] = draw(st.one_of(ids, st.none(), st.none(), anything))
    if draw(st.integers(0, 5)):
        out["timestamp"] = draw(member(timestamps))
    out.update(draw(bodies[kind]))
    return out


header = obj(
    {
        "version": st.sampled_from([3, 3, 2, 1, None, "3", Raw("1e400"), -1, 4, 2.5]),
        "id": st.sampled_from(["s1", "", "11111111-2222-4333-8444-555555555555"]),
        "timestamp": timestamps,
        "cwd": strings,
        "parentSession": strings,
    },
    type="session",
)

bad_lines = st.sampled_from(
    [
        b"",
        b"   ",
        b"not json",
        b"[1,2,3]",
        b'"a string"',
        b'{"glued":1}{"glued":2}',
        b'{"type":"message","id":"q","message":{"role":"user","content":"nul\x00byte"}}',
        b'{"type":"message","id":"r","message":{"role":"user","content":"\xff\xfe"}}',
        b'{"type":"message"',
        b"{}",
        b"null",
    ]
)


@st.composite
def sessions(draw: st.DrawFn) -> bytes:
    """The bytes of one hostile session file."""
    lines: list[bytes] = []
    if draw(st.integers(0, 6)):
        lines.append(dumps(draw(header)))
    for _ in range(draw(st.integers(0, 10))):
        if draw(st.integers(0, 6)):
            lines.append(dumps(draw(entry())))
        else:
            lines.append(draw(bad_lines))
    if draw(st.integers(0, 8)) == 0 and lines:  # a late or second header
        lines.insert(draw(st.integers(0, len(lines))), dumps(draw(header)))
    eol = b"\r\n" if draw(st.integers(0, 9)) == 0 else b"\n"
    data = eol.join(lines)
    if draw(st.integers(0, 4)):
        data += eol
    elif data:  # cut short
        data = data[: draw(st.integers(0, len(data)))]
    if draw(st.integers(0, 15)) == 0:
        data = b"\xef\xbb\xbf" + data
    return data


# --------------------------------------------------------------------------- checks

CONVERTERS = ("asf", "openai", "markdown", "html", "ir", "pi", "atif")


def physical_lines(data: bytes) -> int:
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def check_accounting(document: Any, data: bytes) -> None:
    """Every physical line is a header, an entry or a reported problem, and nothing else."""
    assert document.lines_read == physical_lines(data)
    session = document.session
    kept = {e.origin.line for e in document.entries}
    if session.line:
        kept.add(session.line)
    kept.update(line for line, _v in session.other_headers)
    reported = {i.line for i in document.issues if i.line}
    assert set(range(1, document.lines_read + 1)) == kept | reported, "a line is neither kept nor reported"


def read(data: bytes) -> Any:
    """The document of ``data``, its line accounting checked; ``None`` when it is no session."""
    import piconv

    try:
        document = piconv.load(data)
    except piconv.InputError:
        return None
    check_accounting(document, data)
    return document


def convert_checked(source: Any, name: str, options: dict[str, Any] | None = None) -> bytes:
    """``source`` converted to ``name`` through the public API with validation on; the
    output must also pass the format's own checker, as ``piconv validate`` runs it."""
    import piconv

    converter = piconv.get_format(name)
    sink = io.BytesIO()
    shown = f"{name} {options}" if options else name
    try:
        piconv.convert(source, name, sink, options)
    except piconv.ValidationFailed as exc:
        raise AssertionError(f"{shown} rejected its own output: {exc}") from None
    output = sink.getvalue()
    errors = converter.check(output) if converter.check is not None else []
    assert not errors, f"{shown}: piconv validate refuses the output: {errors[:3]}"
    return output


def variants(document: Any, data: bytes, name: str) -> list[tuple[Any, dict[str, Any] | None]]:
    """The conversions to try for format ``name``: whole and streamed, and the options that
    choose what is written (other leaves, every branch, every leaf)."""
    out: list[tuple[Any, dict[str, Any] | None]] = [(document, None)]
    if name == "asf":
        out.append((data, None))  # streamed entry by entry
    if name in ("openai", "markdown", "atif"):
        out.extend((document, {"leaf": leaf.id}) for leaf in document.leaves()[:2])
    if name == "ir" and document.leaf_id is not None:
        out.append((document, {"with_context": True}))
    if name == "openai":
        out.append((document, {"all_leaves": True}))
    if name == "markdown":
        out.append((document, {"all_branches": True}))
    if name == "pi":
        out.append((document, {"migrate": True}))
    return out
