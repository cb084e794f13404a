"""Hostile ASF files for the fuzz tests (tests/test_fuzz_asf.py).

A file starts from a sound one: piconv's own ASF of a pi session (the repository's
examples, or a hostile pi session from tests/hostile.py), whose entries carry the ``pi``
records and ``normalised`` records the reader acts on, or another writer's file (a small
one written below, in the reference implementation's shape). Then it is broken as an
attacker would: members replaced by values of any type (inside ``pi`` records and items
too), ``legacy_id`` chains run together or looped, ``normalised`` records that point
nowhere, parents that name the entry itself or a later one, versions no reader of 0.11
reads, lines repeated, dropped, swapped, cut short, nested deep, or not JSON at all.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import hostile
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parent.parent

FOREIGN = [
    {
        "type": "session",
        "format": "agentsession/0.11",
        "id": "01995b2a-0000-7000-8000-0000000000aa",
        "created_at": "2026-09-17T12:00:00Z",
        "cwd": "/home/u/proj",
        "payload": "openresponses/2026-04-24",
        "harness": {"name": "fixture", "version": "1"},
    },
    {
        "type": "config",
        "id": "c1",
        "parent": None,
        "ts": "2026-09-17T12:00:00Z",
        "model": "gpt-5",
        "instructions": "Be brief.",
        "reasoning": {"effort": "none"},
        "tools_added": [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}],
    },
    {
        "type": "item",
        "id": "i1",
        "parent": "c1",
        "ts": "2026-09-17T12:00:01Z",
        "item": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "2+2?"}]},
    },
    {
        "type": "item",
        "id": "i2",
        "parent": "i1",
        "ts": "2026-09-17T12:00:02Z",
        "response": "resp_1",
        "item": {"type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": '{"q":"2+2"}'},
    },
    {
        "type": "response",
        "id": "r1",
        "parent": "i2",
        "ts": "2026-09-17T12:00:02Z",
        "response_id": "resp_1",
        "model": "gpt-5",
        "status": "completed",
        "usage": {"input_tokens": 40, "output_tokens": 12, "total_tokens": 52},
    },
    {
        "type": "item",
        "id": "i3",
        "parent": "r1",
        "ts": "2026-09-17T12:00:03Z",
        "item": {"type": "function_call_output", "call_id": "call_1", "output": "4"},
    },
    {
        "type": "compaction",
        "id": "k1",
        "parent": "i3",
        "ts": "2026-09-17T12:00:04Z",
        "first_kept": "i3",
        "summary": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "sum"}]},
        "config": {"model": "gpt-5", "instructions": "Be brief."},
    },
    {"type": "label", "id": "l1", "parent": "k1", "ts": "2026-09-17T12:00:05Z", "target": "i1", "label": "q"},
    {"type": "info", "id": "n1", "parent": "l1", "ts": "2026-09-17T12:00:05Z", "name": "maths"},
    {"type": "x:note", "id": "x1", "parent": "n1", "ts": "2026-09-17T12:00:06Z", "text": "<b>hi</b>"},
]


def _lines(data: bytes) -> list[bytes]:
    return [line for line in data.split(b"\n") if line]


def own_asf(pi_session: bytes) -> list[bytes] | None:
    """piconv's ASF of a pi session, as lines (``None`` when it is no pi session)."""
    import piconv

    try:
        document = piconv.load(pi_session, reader="pi", keep_source="layout")
    except piconv.InputError:
        return None
    sink = io.BytesIO()
    piconv.convert(document, "asf", sink, validate=False)
    return _lines(sink.getvalue())


def seeds() -> st.SearchStrategy[list[bytes]]:
    examples = [
        _lines((REPO / "examples" / name).read_bytes()) for name in ("basic.jsonl", "branching.jsonl")
    ]
    pi_made = st.sampled_from(examples).map(lambda lines: own_asf(b"\n".join(lines) + b"\n"))
    from_hostile = hostile.sessions().map(own_asf)
    foreign = st.just([json.dumps(v, separators=(",", ":")).encode() for v in FOREIGN])
    return st.one_of(pi_made, pi_made, from_hostile, foreign).filter(lambda lines: bool(lines))


PI_RECORD_KEYS = [
    "type",
    "role",
    "line",
    "extra",
    "synthesized",
    "timestamp",
    "message",
    "layout",
    "text",
    "refused",
    "first_kept_id",
    "from_id",
    "checkpoint",
    "usage",
    "label",
    "level",
    "extension_type",
    "kind",
    "provider",
    "replacement",
    "replacement_form",
    "omit",
    "target_id",
    "summary_absent",
    "other_headers",
    "id_synthesized",
    "id",
]
MESSAGE_KEYS = [
    "parts",
    "content_form",
    "content_absent",
    "usage",
    "call_id",
    "tool_name",
    "details",
    "kind",
    "sections",
    "section_order",
    "tools_added",
    "extension",
    "timestamp",
    "extra",
]
wild = st.one_of(
    hostile.anything,
    st.lists(st.fixed_dictionaries({"at": hostile.anything, "was": hostile.anything}), max_size=3),
    st.lists(
        st.fixed_dictionaries(
            {
                "at": st.sampled_from(["", "/", "/x/0", "/item/~", "/pi"]),
                "was": st.sampled_from(['"\\ud800"', "12", "x", "[]", '{"a":1}']),
            }
        ),
        max_size=3,
    ),
    st.lists(
        st.dictionaries(st.sampled_from(["at", "part", "kind", "text"]), hostile.anything, max_size=3),
        max_size=3,
    ),
)


@st.composite
def broken(draw: st.DrawFn, lines: list[bytes]) -> bytes:
    """``lines`` broken a few times over, as bytes."""
    values: list[Any] = []
    for line in lines:
        try:
            values.append(json.loads(line))
        except ValueError:
            values.append(line)
    for _ in range(draw(st.integers(0, 6))):
        if not values:
            break
        at = draw(st.integers(0, len(values) - 1))
        target = values[at]
        how = draw(st.integers(0, 12))
        if how <= 3 and isinstance(target, dict):
            key = draw(
                st.sampled_from(
                    [*target.keys(), "pi", "normalised", "legacy_id", "parent", "item", "id", "type"]
                )
            )
            target[key] = draw(wild)
        elif how == 4 and isinstance(target, dict) and isinstance(target.get("pi"), dict):
            target["pi"][draw(st.sampled_from(PI_RECORD_KEYS))] = draw(wild)
        elif how == 5 and isinstance(target, dict) and isinstance(target.get("pi"), dict):
            message = target["pi"].setdefault("message", {})
            if isinstance(message, dict):
                message[draw(st.sampled_from(MESSAGE_KEYS))] = draw(wild)
        elif how == 6 and isinstance(target, dict):
            other = values[draw(st.integers(0, len(values) - 1))]
            if isinstance(other, dict):  # run chains together, or name itself or a later entry
                field = draw(st.sampled_from(["legacy_id", "parent", "id", "first_kept", "target", "from"]))
                source = draw(st.sampled_from(["legacy_id", "id", "parent"]))
                target[field] = other.get(source)
        elif how == 7 and isinstance(target, dict) and isinstance(target.get("item"), dict):
            target["item"][
                draw(
                    st.sampled_from(
                        ["type", "content", "output", "arguments", "summary", "role", "call_id", "name"]
                    )
                )
            ] = draw(wild)
        elif how == 8 and at == 0 and isinstance(target, dict):
            target["format"] = draw(
                st.sampled_from(
                    [
                        "agentsession/0.12",
                        "agentsession/1.0",
                        "agentsession/0.4",
                        "agentsession/0.5",
                        "agentsession/x",
                        "agentsession/0.11.1",
                        "agentsession/00.11",
                        11,
                    ]
                )
            )
        elif how == 9:
            values.insert(
                draw(st.integers(0, len(values))),
                draw(st.sampled_from([b"not json", b"[1]", b"{}", b"", b'{"type":"item"', b"\xff"])),
            )
        elif how == 10:
            other = draw(st.integers(0, len(values) - 1))
            values[at], values[other] = values[other], values[at]
        elif how == 11:
            values.insert(at, target)  # the line twice
        elif how == 12 and isinstance(target, dict):
            target[draw(st.sampled_from(["deep", "pi", "item"]))] = hostile._deep(
                draw(st.sampled_from([150, 210, 230, 400]))
            )
    out = [v if isinstance(v, bytes) else hostile.dumps(v) for v in values]
    data = b"\n".join(out) + b"\n"
    if draw(st.integers(0, 5)) == 0:
        data = data[: draw(st.integers(0, len(data)))]
    return data


@st.composite
def files(draw: st.DrawFn) -> bytes:
    """The bytes of one hostile ASF file."""
    return draw(broken(draw(seeds())))
