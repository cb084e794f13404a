"""The fast paths agree with the slow, plain readings they stand in for.

- ``checks.proven_valid`` (hand-written schema shapes) never accepts a line jsonschema
  rejects, on every corpus output and on systematically mutated entries, and proves
  nearly every line piconv writes (so jsonschema is rarely asked).
- ``checks.Ancestry`` answers like a walk up the parent links.
- ``ids.canonical_ts``'s regex-free path equals the regular expression's answer.
- ``jcs._float_text`` equals ``jcs.number_text``; the container-only walk equals the
  one-call-per-value walk.
- Validating while writing catches a bad line and names it.
"""

from __future__ import annotations

import io
import os
import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import SHARED
from hypothesis import given, settings
from hypothesis import strategies as st
from piconv.converters.asf import checks, ids, jcs
from piconv.converters.asf.checks import Ancestry, proven_valid
from piconv.converters.asf.validate import _validator, validate_asf
from piconv.converters.asf.writer import write_asf
from piconv.errors import ValidationFailed
from piconv.report import Report

CORPUS = sorted([*SHARED.glob("corpus/pi/*.jsonl"), *SHARED.glob("corpus/pi-generated/*.jsonl")])
EXAMPLES = sorted((SHARED / "reference" / "asf" / "examples").glob("*.jsonl"))


def asf_lines(path: Path, validate: bool = False) -> list[dict[str, Any]]:
    import piconv

    out = io.BytesIO()
    write_asf(piconv.load(path), out, {"validate": validate}, Report(format="asf"))
    return [orjson.loads(raw) for raw in out.getvalue().splitlines()]


@pytest.fixture(scope="module")
def corpus_entries() -> list[dict[str, Any]]:
    entries = []
    for path in CORPUS:
        entries.extend(asf_lines(path)[1:])
    for path in EXAMPLES:
        for raw in path.read_bytes().splitlines():
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if value.get("type") != "session":
                entries.append(value)
    return entries


def test_corpus_outputs_agree_and_are_proven(corpus_entries: list[dict[str, Any]]) -> None:
    validator = _validator()
    proven = 0
    for entry in corpus_entries:
        fast = proven_valid(entry)
        assert validator.is_valid(entry) or not fast, entry
        proven += fast
    assert proven >= 0.97 * len(corpus_entries)  # the fast path does the work


_WRONG: list[Any] = [None, True, 0, -1, 1.5, 2.0, "", "x", "sha256:" + "0" * 64, [], [{}], {}, {"type": "x"}]


def _paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[Any, ...]]:
    out = []
    if depth > 4:
        return out
    if type(value) is dict:
        for k, v in value.items():
            out.append((*prefix, k))
            out.extend(_paths(v, (*prefix, k), depth + 1))
    elif type(value) is list:
        for i, v in enumerate(value[:3]):
            out.append((*prefix, i))
            out.extend(_paths(v, (*prefix, i), depth + 1))
    return out


def _set(value: Any, path: tuple[Any, ...], new: Any, delete: bool = False) -> Any:
    copy = orjson.loads(orjson.dumps(value))
    node = copy
    for step in path[:-1]:
        node = node[step]
    if delete:
        if type(node) is dict:
            del node[path[-1]]
        else:
            node.pop(path[-1])
    else:
        node[path[-1]] = new
    return copy


def _samples(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A few entries of every (entry type, item type, key set) shape."""
    by_shape: dict[Any, list[dict[str, Any]]] = {}
    for e in entries:
        item = e.get("item") if type(e.get("item")) is dict else {}
        shape = (e.get("type"), item.get("type"), item.get("role"), tuple(sorted(e)))
        by_shape.setdefault(shape, []).append(e)
    rng = random.Random(7)
    return [x for group in by_shape.values() for x in rng.sample(group, min(2, len(group)))]


def test_mutated_entries_never_proven_when_invalid(corpus_entries: list[dict[str, Any]]) -> None:
    validator = _validator()
    checked = rejected = 0
    for entry in _samples(corpus_entries):
        for path in _paths(entry):
            mutants = [_set(entry, path, None, delete=True)] + [_set(entry, path, w) for w in _WRONG]
            for m in mutants:
                valid = validator.is_valid(m)
                assert valid or not proven_valid(m), (path, m)
                checked += 1
                rejected += not valid
    assert checked > 1000 and rejected > 200


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("type",), "pi"),  # not namespaced
        (("type",), "run"),  # a record type without its members
        (("id",), "sha256:" + "A" * 64),
        (("parent",), "sha256:" + "0" * 63),
        (("ts",), "2026-01-01T00:00:00.0Z"),
        (("ts",), "2026-01-01T00:00:60Z"),
        (("content",), "x"),
        (("item", "type"), "function_call"),
        (("item", "content", 0), {"type": "input_text"}),  # input_text needs text
        (("item", "content", 0, "text"), 3),
        (("item", "role"), "tool"),
        (("item", "status"), "done"),
        (("legacy_id",), 1),
        (("normalised",), [{"was": "x"}]),
    ],
)
def test_listed_mutations_rejected_by_both(path: tuple[Any, ...], value: Any) -> None:
    entry = {
        "type": "item", "id": "sha256:" + "a" * 64, "parent": None, "ts": "2026-01-01T00:00:00Z",
        "item": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi", "annotations": []}]},
        "legacy_id": "x",
    }
    assert proven_valid(entry) and _validator().is_valid(entry)
    bad = _set(entry, path, value)
    assert not _validator().is_valid(bad)
    assert not proven_valid(bad)


# --------------------------------------------------------------------------- the C predicate


def _c_may_decline(value: Any) -> bool:
    """Where _checks.c may say False although Python proves the line: pattern matches by
    Unicode digits or before a trailing newline (``re.search``'s ``$``), ``normalised``."""
    text = orjson.dumps(value).decode()
    return not text.isascii() or "\\n" in text or '"normalised"' in text


def _both(value: Any) -> tuple[bool, bool]:
    assert checks._c_proven_valid is not None, "converters/asf/_checks.c was not built or does not apply"
    c, py = checks._c_proven_valid(value), checks.proven_valid_python(value)
    assert py or not c, value  # C proves nothing Python does not
    assert c == py or _c_may_decline(value), value
    return c, py


def test_the_c_predicate_is_built_and_used() -> None:
    from piconv.converters.asf import _checks

    if not os.environ.get("PICONV_PURE_PYTHON"):
        assert checks._c_proven_valid is _checks.proven_valid


def test_the_c_predicate_answers_as_python(corpus_entries: list[dict[str, Any]]) -> None:
    proven = sum(_both(entry)[0] for entry in corpus_entries)
    assert proven >= 0.97 * len(corpus_entries)
    checked = 0
    odd: list[Any] = [*_WRONG, -(2**70), 2**70, 3, "\n", "a\x00", "item\x00", "pi:x", "x:", ":x", "٣"]
    odd.append({"type": "pi:x"})
    for entry in _samples(corpus_entries):
        for path in _paths(entry):
            for m in [_set(entry, path, None, delete=True)] + [_set(entry, path, w) for w in odd]:
                _both(m)
                checked += 1
    assert checked > 1000


# A valid line with only envelope members to vary.
_INFO = {
    "type": "info",
    "id": "sha256:" + "a" * 64,
    "parent": None,
    "ts": "2026-01-01T00:00:00Z",
    "name": None,
}


@pytest.mark.parametrize(
    ("member", "text", "proven"),
    [
        ("ts", "2026-01-01T00:00:00.5Z", True),
        ("ts", "2026-01-01T00:00:00.123456789Z", True),
        ("ts", "2026-01-01T00:00:00.50Z", False),
        ("ts", "2026-01-01T00:00:00.1234567891Z", False),
        ("ts", "2026-01-01T00:00:60Z", False),
        ("ts", "2026-01-01T00:00:00Z\n", True),  # re.search's $: C declines, Python proves
        ("ts", "2026-01-01T00:00:0٣Z", True),  # \d is any decimal digit: likewise
        ("type", "pi:x:y", True),
        ("type", "x:", False),
        ("type", "é:x", False),
        ("type", "pi:x\n", True),
        ("id", "sha256:" + "a" * 64 + "\n", True),
    ],
)
def test_the_c_patterns_on_edges(member: str, text: str, proven: bool) -> None:
    base = _INFO
    assert _both({**base, member: text})[1] is proven


_ts_chars = st.sampled_from([*"0123456789", "-", ":", "T", "Z", ".", "٣", "\n", "t"])


@settings(max_examples=800)
@given(
    st.lists(_ts_chars, min_size=18, max_size=32).map("".join),
    st.text(alphabet=st.sampled_from([*"0123456789abcdefA", "\n", "٣"]), min_size=60, max_size=66),
    st.text(alphabet=st.sampled_from([*"aZ09_.-:", "é", "\n", " "]), max_size=8),
)
def test_the_c_patterns_answer_as_the_schema(ts: str, digest: str, ns: str) -> None:
    base = _INFO
    for value in (
        {**base, "ts": ts},
        {**base, "ts": f"2026-01-01T00:00:{ts[-6:]}"},
        {**base, "id": "sha256:" + digest},
        {**base, "parent": "sha256:" + digest[:64]},
        {**base, "type": ns},
        {**base, "type": "item", "item": {"type": ns}},
    ):
        _both(value)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_written_with_validation_and_checked_whole(path: Path) -> None:
    import piconv

    plain = io.BytesIO()
    checked = io.BytesIO()
    doc = piconv.load(path)
    write_asf(doc, plain, {}, Report(format="asf"))
    write_asf(doc, checked, {"validate": True}, Report(format="asf"))
    assert plain.getvalue() == checked.getvalue()
    assert validate_asf(checked.getvalue()) == []


def test_validation_while_writing_names_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import piconv
    from piconv.converters.asf import writer

    original = writer._Writer.map_body

    def broken(self: Any, entry: Any, *args: Any) -> Any:
        lines, state = original(self, entry, *args)
        if lines and lines[-1][0] == "label":
            lines[-1][1]["target"] = "sha256:" + "0" * 64  # names no entry
        return lines, state

    monkeypatch.setattr(writer._Writer, "map_body", broken)
    path = next(p for p in CORPUS if b'"type":"label"' in p.read_bytes())
    with pytest.raises(ValidationFailed, match=r"line \d+: ref-unknown"):
        write_asf(piconv.load(path), io.BytesIO(), {"validate": True}, Report(format="asf"))


@settings(max_examples=200)
@given(st.lists(st.integers(min_value=-1, max_value=60), min_size=1, max_size=80), st.data())
def test_ancestry_answers_like_a_walk(parents: list[int], data: st.DataObject) -> None:
    anc = Ancestry()
    parent_of: dict[str, str | None] = {}
    for i, p in enumerate(parents):
        parent = f"n{p}" if 0 <= p < i else None
        anc.add(f"n{i}", parent)
        parent_of[f"n{i}"] = parent
    for _ in range(20):
        a = f"n{data.draw(st.integers(0, len(parents)))}"
        b = f"n{data.draw(st.integers(0, len(parents)))}"
        node: str | None = b if b in parent_of else None
        walk = a == b
        while node is not None and not walk:
            walk = node == a
            node = parent_of[node]
        assert anc.on_path(a, b) == walk


_digit = st.sampled_from("0123456789")


@settings(max_examples=500)
@given(st.lists(st.one_of(_digit, st.sampled_from("0123456789:-.TtZz+ ٣")), min_size=24, max_size=24))
def test_canonical_ts_fast_path_equals_the_regex(chars: list[str]) -> None:
    text = "".join(chars)
    assert ids.canonical_ts(text) == ids.canonical_ts_general(text)


@settings(max_examples=500)
@given(
    st.integers(0, 9999), st.integers(0, 13), st.integers(0, 32), st.integers(0, 24), st.integers(0, 60),
    st.integers(0, 60), st.integers(0, 999),
)
def test_canonical_ts_fast_path_on_dates(y: int, mo: int, d: int, h: int, mi: int, s: int, ms: int) -> None:
    text = f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}.{ms:03d}Z"
    assert ids.canonical_ts(text) == ids.canonical_ts_general(text)


@settings(max_examples=1000)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_float_text_equals_number_text(x: float) -> None:
    try:
        expected = jcs.number_text(x)
    except jcs.CanonicalError:
        with pytest.raises(jcs.CanonicalError):
            jcs._float_text(x)
        return
    assert jcs._float_text(x) == expected


keys = st.one_of(st.text(max_size=6), st.sampled_from(["\U0001f600", "\ue000", "a"]))
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**60), 2**60), st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=5),
)
values = st.recursive(scalars, lambda c: st.one_of(st.lists(c, max_size=4), st.tuples(c, c), st.dictionaries(keys, c, max_size=4)), max_leaves=25)


@settings(max_examples=600)
@given(values)
def test_container_walk_equals_value_walk(value: Any) -> None:
    try:
        slow = jcs._dump(jcs._prepare_slow(value))
    except jcs.CanonicalError as exc:
        with pytest.raises(jcs.CanonicalError, match=None) as info:
            jcs.canonical(value)
        assert str(info.value) == str(exc)
        return
    assert jcs.canonical(value) == slow
    assert jcs.is_plain(value) == (jcs._prepare_slow(value) is value)


@pytest.mark.parametrize("fault", ["id-duplicate", "parent-unknown"])
def test_an_id_written_twice_or_a_parent_not_written_stops_the_writer(fault: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The links an item, response or config has are checked as its id joins the
    ancestry (in C where built): a writer that repeated an id or named a parent it never
    wrote is stopped at that line."""
    import piconv
    from piconv.converters.asf import writer

    original = writer._Writer.emit
    made: list[str] = []

    def faulty(self: Any, type_: str, parent: Any, ts: str, body: Any, line: int) -> str:
        if len(made) == 3:
            if fault == "id-duplicate":
                monkeypatch.setattr(writer, "_c_entry", lambda *a: (made[1], original_line(a)))
            else:
                parent = "sha256:" + "f" * 64
        entry_id = original(self, type_, parent, ts, body, line)
        made.append(entry_id)
        return entry_id

    def original_line(args: tuple) -> bytes:
        return b"{}\n"

    monkeypatch.setattr(writer._Writer, "emit", faulty)
    with pytest.raises(ValidationFailed, match=rf"line \d+: {fault}"):
        write_asf(piconv.load(CORPUS[0]), io.BytesIO(), {"validate": True}, Report(format="asf"))
