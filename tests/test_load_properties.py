"""Property tests for the whole read path: whatever the bytes, loading never crashes, every
line is accounted for, the context builds at every leaf and the pi writer round-trips."""

from __future__ import annotations

import json

import piconv
import pytest
from conftest import corpus_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from piconv import InputError
from piconv.pi.write import pi_lines

SMALL = [p for p in corpus_files() if p.stat().st_size < 80_000]
LINES = [line for p in SMALL for line in p.read_bytes().splitlines() if line.strip()]

ids = st.sampled_from(["a", "b", "c", "d", None, 7, "a"])
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=8,
)
entry_types = st.sampled_from(
    [
        "message",
        "compaction",
        "branch_summary",
        "label",
        "context_edit",
        "custom_message",
        "model_change",
        "mystery",
    ]
)


@st.composite
def entries(draw: st.DrawFn) -> dict:
    entry = {
        "type": draw(entry_types),
        "id": draw(ids),
        "parentId": draw(ids),
        "timestamp": draw(st.sampled_from(["2026-01-01T00:00:00Z", "bad", 5])),
    }
    kind = entry["type"]
    if kind == "message":
        role = draw(
            st.sampled_from(["user", "assistant", "toolResult", "system", "bashExecution", "custom", "alien"])
        )
        entry["message"] = {
            "role": role,
            "content": draw(st.none() | st.text(max_size=5) | st.lists(json_values, max_size=3)),
        }
    elif kind == "compaction":
        entry.update(
            summary=draw(st.text(max_size=5)),
            firstKeptEntryId=draw(ids),
            tokensBefore=draw(st.integers(0, 9)),
        )
    elif kind == "context_edit":
        entry.update(
            targetId=draw(ids),
            replacement=draw(st.none() | st.fixed_dictionaries({"content": st.text(max_size=3)})),
        )
    elif kind == "label":
        entry.update(targetId=draw(ids), label=draw(st.none() | st.text(max_size=3)))
    entry.update(draw(st.dictionaries(st.sampled_from(["x", "extra", "message"]), json_values, max_size=2)))
    return entry


def _check(data: bytes) -> None:
    try:
        doc = piconv.load(data)
    except InputError:
        return
    headers = (1 if doc.session.line else 0) + len(doc.session.other_headers)
    problem_lines = {i.line for i in doc.issues if i.line}
    entry_lines = {e.origin.line for e in doc.entries}
    header_lines = ({doc.session.line} if doc.session.line else set()) | {
        line for line, _v in doc.session.other_headers
    }
    # every physical line is an entry, a header or a reported problem
    assert set(range(1, doc.lines_read + 1)) <= entry_lines | header_lines | problem_lines
    assert len(entry_lines) + headers <= doc.lines_read
    for leaf in doc.leaves():
        doc.context(leaf.id)
    written = dict(pi_lines(doc))
    for line, value in written.items():
        if line in entry_lines or line in header_lines:
            assert isinstance(value, dict)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(entries(), min_size=0, max_size=8), st.booleans())
def test_random_sessions_load_and_project(items: list[dict], with_header: bool) -> None:
    lines = [json.dumps(e).encode() for e in items]  # the stdlib: integers beyond 64 bits too
    if with_header:
        lines.insert(0, b'{"type":"session","version":3,"id":"s"}')
    _check(b"\n".join(lines) + b"\n")


@pytest.mark.shared
@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(LINES), min_size=1, max_size=10),
    st.lists(st.tuples(st.integers(0, 9), st.integers(0, 400), st.binary(max_size=3)), max_size=4),
)
def test_mutated_corpus_lines_never_crash(picked: list[bytes], cuts: list[tuple[int, int, bytes]]) -> None:
    lines = list(picked)
    for index, offset, junk in cuts:
        i = index % len(lines)
        lines[i] = lines[i][:offset] + junk + lines[i][offset + len(junk) :]
    _check(b"\n".join(lines))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_crash(data: bytes) -> None:
    _check(data)
