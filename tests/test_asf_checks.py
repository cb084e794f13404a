"""The checks while writing, and the fast paths that agree with the plain readings they
stand in for.

- Validating while writing changes no byte, and catches a bad line and names it.
- ``links.Ancestry`` answers like a walk up the parent links.
- ``ids.canonical_ts``'s regex-free path equals the regular expression's answer.
- A value ``jcs.is_plain`` passes is one the rewriting walk leaves as it is.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED
from hypothesis import given, settings
from hypothesis import strategies as st
from piconv.converters.asf import ids, jcs
from piconv.converters.asf.filecheck import validate_asf
from piconv.converters.asf.links import Ancestry
from piconv.converters.asf.writer import write_asf
from piconv.errors import ValidationFailed
from piconv.report import Report

CORPUS = sorted([*SHARED.glob("corpus/pi/*.jsonl"), *SHARED.glob("corpus/pi-generated/*.jsonl")])


@pytest.mark.shared
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


@pytest.mark.shared
def test_validation_while_writing_names_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import piconv
    from piconv.converters.asf.mapping import Mapper

    original = Mapper.map_body

    def broken(self: Any, entry: Any, *args: Any) -> Any:
        lines, state = original(self, entry, *args)
        if lines and lines[-1][0] == "label":
            lines[-1][1]["target"] = "sha256:" + "0" * 64  # names no entry
        return lines, state

    monkeypatch.setattr(Mapper, "map_body", broken)
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
    st.integers(0, 9999),
    st.integers(0, 13),
    st.integers(0, 32),
    st.integers(0, 24),
    st.integers(0, 60),
    st.integers(0, 60),
    st.integers(0, 999),
)
def test_canonical_ts_fast_path_on_dates(y: int, mo: int, d: int, h: int, mi: int, s: int, ms: int) -> None:
    text = f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}.{ms:03d}Z"
    assert ids.canonical_ts(text) == ids.canonical_ts_general(text)


keys = st.one_of(st.text(max_size=6), st.sampled_from(["\U0001f600", "\ue000", "a"]))
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**60), 2**60),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=5),
)
values = st.recursive(
    scalars,
    lambda c: st.one_of(st.lists(c, max_size=4), st.tuples(c, c), st.dictionaries(keys, c, max_size=4)),
    max_leaves=25,
)


@settings(max_examples=600)
@given(values)
def test_plain_values_are_those_the_rewriting_walk_leaves_alone(value: Any) -> None:
    try:
        prepared = jcs._prepare(value)
    except jcs.CanonicalError:
        with pytest.raises(jcs.CanonicalError):
            jcs.canonical(value)
        return
    assert jcs.is_plain(value) == (prepared is value)


@pytest.mark.shared
@pytest.mark.parametrize("fault", ["id-duplicate", "parent-unknown"])
def test_an_id_written_twice_or_a_parent_not_written_stops_the_writer(
    fault: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer that repeated an id or named a parent it never wrote is stopped at that line."""
    import piconv
    from piconv.converters.asf.emit import Emitter

    original = Emitter.emit
    made: list[str] = []

    def faulty(self: Any, type_: str, parent: Any, ts: str, body: Any, line: int) -> str:
        if len(made) == 3:
            if fault == "id-duplicate":  # the same entry twice: the same id
                original(self, type_, parent, ts, dict(body), line)
            else:
                parent = "sha256:" + "f" * 64
        entry_id = original(self, type_, parent, ts, body, line)
        made.append(entry_id)
        return entry_id

    monkeypatch.setattr(Emitter, "emit", faulty)
    out = io.BytesIO()
    # the header is line 1 and three entries follow; the fourth (and, repeated, the fifth) fails
    failing = 6 if fault == "id-duplicate" else 5
    with pytest.raises(ValidationFailed, match=rf"line {failing}: {fault}"):
        write_asf(piconv.load(CORPUS[0]), out, {"validate": True}, Report(format="asf"))
    assert len(out.getvalue().splitlines()) == failing - 1  # nothing of the failing line
