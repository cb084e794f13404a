"""RFC 8785 canonical JSON: piconv's serialiser equals the rfc8785 package, the test oracle."""

from __future__ import annotations

import math
from pathlib import Path

import orjson
import pytest
import rfc8785
from conftest import SHARED
from hypothesis import given, settings
from hypothesis import strategies as st
from piconv.converters.asf import jcs

EXAMPLES = SHARED / "reference" / "asf" / "examples"

# Keys mixing supplementary characters with U+E000-U+FFFF: where UTF-8 and UTF-16 orders part.
keys = st.one_of(
    st.text(max_size=8),
    st.text(
        alphabet=st.sampled_from(["a", "\ue000", "\uffff", "\U0001f600", "\U00010000", "z", "é"]), max_size=4
    ),
)
numbers = st.one_of(
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),  # rfc8785's integer domain
    st.floats(allow_nan=False, allow_infinity=False),
)
scalars = st.one_of(
    st.none(), st.booleans(), numbers, st.text(alphabet=st.characters(exclude_categories=["Cs"]))
)
values = st.recursive(
    scalars, lambda c: st.one_of(st.lists(c, max_size=5), st.dictionaries(keys, c, max_size=5)), max_leaves=30
)


@settings(max_examples=600)
@given(values)
def test_fast_path_equals_rfc8785(value: object) -> None:
    expected = rfc8785.dumps(value)
    assert jcs.canonical(value) == expected


def _spell_floats(value: object) -> object:
    if isinstance(value, dict):
        return {k: _spell_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_spell_floats(v) for v in value]
    return jcs.spelled(value)


@settings(max_examples=400)
@given(values)
def test_spelled_floats_serialise_alike(value: object) -> None:
    # A writer spelling the floats it builds (jcs.spelled) gets the same bytes, and the
    # value stays plain unless something else in it is not.
    spelled = _spell_floats(value)
    assert jcs.canonical(spelled) == rfc8785.dumps(value)
    assert jcs.is_plain(spelled) == jcs.is_plain(_spell_floats(_drop_floats(value)))


def _drop_floats(value: object) -> object:
    if isinstance(value, dict):
        return {k: _drop_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_drop_floats(v) for v in value]
    return None if type(value) is float else value


@pytest.mark.parametrize("x", [math.inf, -math.inf, math.nan])
def test_spelled_leaves_non_finite_floats_to_be_refused(x: float) -> None:
    assert jcs.spelled(x) is x
    with pytest.raises(jcs.CanonicalError):
        jcs.canonical({"cost": jcs.spelled(x)})


@settings(max_examples=400)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_numbers_match_ecmascript(x: float) -> None:
    assert jcs.number_text(x).encode() == rfc8785.dumps(x)
    assert float(jcs.number_text(x)) == x or x == 0


@settings(max_examples=600)
@given(st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-(2**70), 2**70).map(float)))
def test_spelled_floats_match_ecmascript(x: float) -> None:
    # spelled() has its own short cuts (repr as it stands, whole numbers below 1e16)
    assert bytes(orjson.dumps([jcs.spelled(x)]))[1:-1] == rfc8785.dumps(x)


@settings(max_examples=300)
@given(st.integers(min_value=2**53, max_value=2**80))
def test_big_integers_render_as_their_double(n: int) -> None:
    # JCS renders every number as a binary64; the package refuses ints past 2**53, so
    # compare with its rendering of the double we round to.
    if jcs.int_is_ijson(n):
        assert jcs.canonical(n) == rfc8785.dumps(float(n))
    else:
        with pytest.raises(jcs.CanonicalError):
            jcs.canonical(n)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (-0.0, "0"),
        (2**60, "1152921504606847000"),
        (1152921504606847000, "1152921504606847000"),
        (0.000001, "0.000001"),
    ],
)
def test_number_spellings(value: float, text: str) -> None:
    assert jcs.number_text(value) == text


def test_utf16_key_order() -> None:
    value = {"\ue000": 1, "\U0001f600": 2}
    assert jcs.canonical(value) == rfc8785.dumps(value)
    assert list(orjson.loads(jcs.canonical(value))) == ["\U0001f600", "\ue000"]


@pytest.mark.parametrize("bad", [float("nan"), math.inf, 9007199254740993, "\ud83d", {1: 2}])
def test_refuses_non_ijson(bad: object) -> None:
    with pytest.raises(jcs.CanonicalError):
        jcs.canonical(bad)


@pytest.mark.shared
@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.jsonl")), ids=lambda p: p.name)
def test_reference_examples_canonicalise_alike(path: Path) -> None:
    for raw in path.read_bytes().splitlines():
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue  # the truncated example's last line
        assert jcs.canonical(value) == rfc8785.dumps(value)
