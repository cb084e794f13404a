"""piconv.schemacheck gives jsonschema's verdict on the Markdown front matter and on each
keyword it knows, and refuses the keywords it does not know.

A yes where jsonschema finds an error would let an invalid output through unchecked, so the
front matter of every corpus output (both layouts) and front matters broken in the ways a
writer could break them are run through both; small schemas for each keyword added for the
front matter are run through both on generated JSON values.
"""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import piconv
import pytest
from conftest import corpus_files, corpus_ids
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from piconv import Report
from piconv.converters.markdown import frontmatter, write
from piconv.schemacheck import UnsupportedSchema, compile_schema
from piconv.validation import load_schema

FRONT_MATTER = ("piconv.converters.markdown", "schema/front-matter.schema.json")
PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


_VALIDATORS: dict[str, tuple[Any, Any]] = {}


def _js(schema: dict[str, Any]) -> Any:
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _both(schema: dict[str, Any]) -> tuple[Any, Any]:
    """jsonschema's validator and the predicate for ``schema``, made once per schema: the
    generated-value tests call them hundreds of times."""
    key = json.dumps(schema, sort_keys=True)
    if key not in _VALIDATORS:
        _VALIDATORS[key] = (_js(schema), compile_schema(schema))
    return _VALIDATORS[key]


def _front_matter(path: Path, all_branches: bool) -> dict[str, Any]:
    out = io.BytesIO()
    options = {"images": "embed", "all_branches": all_branches, "leaf": None, "output_path": None}
    write(piconv.load(path), out, options, Report("markdown"))
    lines, _ = frontmatter.split(out.getvalue().decode("utf-8"))
    return frontmatter.parse(lines)


def test_the_front_matter_schema_compiles() -> None:
    assert callable(compile_schema(load_schema(*FRONT_MATTER)))


@pytest.mark.parametrize("all_branches", [False, True], ids=["path", "tree"])
@pytest.mark.parametrize("path", corpus_files(), ids=corpus_ids())
def test_corpus_front_matter_is_valid_for_both(path: Path, all_branches: bool) -> None:
    schema = load_schema(*FRONT_MATTER)
    fm = _front_matter(path, all_branches)
    assert fm["layout"] == ("tree" if all_branches else "path")
    assert _js(schema).is_valid(fm)
    assert compile_schema(schema)(fm)


_ODD: tuple[Any, ...] = (None, 0, -1, 1.0, 2.5, -0.5, True, False, "", "x", "1", [], ["a"], {}, {"a": 1})
_COUNTS = ("messages", "tokens")


def _mutations(fm: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    for key in list(fm):
        yield f"without {key}", {k: v for k, v in fm.items() if k != key}
        for odd in _ODD:
            yield f"{key}={odd!r}", {**fm, key: odd}
    for group in ("messages", "tokens", "cost"):
        for key in list(fm[group]):
            yield f"{group} without {key}", {**fm, group: {k: v for k, v in fm[group].items() if k != key}}
            for odd in (*_ODD, -1.0, 7, 7.0, 1e300, -(2**70), 2**70):
                yield f"{group}.{key}={odd!r}", {**fm, group: {**fm[group], key: odd}}
        yield f"{group} extra key", {**fm, group: {**fm[group], "other": 0}}
    yield "extra key", {**fm, "colour": "red"}
    for models in (["a/b", "a/b"], ["a/b", "c/d"], ["a/b", 1], [], [["a"], ["a"]], ["😀", "😀"], ["a", "A"]):
        yield f"models={models!r}", {**fm, "models": models}
        yield f"thinking_levels={models!r}", {**fm, "thinking_levels": models}
    for title in ("", "x", "😀", "😀😀", "\u0301", "\U0010ffff", " "):
        yield f"title={title!r}", {**fm, "title": title}
    # The conditional: segments is required with layout tree and forbidden with layout path.
    for layout in ("path", "tree", "both", None):
        without = {k: v for k, v in fm.items() if k != "segments"}
        yield f"layout={layout!r} without segments", {**without, "layout": layout}
        for segments in (0, 3, -1, 3.0, 3.5, True, None, "3"):
            yield f"layout={layout!r} segments={segments!r}", {**without, "layout": layout, "segments": segments}
    yield "generator", {**fm, "generator": "piconv html"}
    for other in (None, [], "x", 1, [fm]):
        yield f"not an object: {other!r}", other


@pytest.mark.parametrize("all_branches", [False, True], ids=["path", "tree"])
def test_mutated_front_matter_gets_the_same_verdict(all_branches: bool) -> None:
    schema = load_schema(*FRONT_MATTER)
    validator, predicate = _js(schema), compile_schema(schema)
    seen: set[str] = set()
    valid = invalid = 0
    for path in corpus_files():
        fm = _front_matter(path, all_branches)
        # Distinct shapes only: most corpus front matters differ in values the mutations overwrite.
        shape = json.dumps(sorted(fm)) + json.dumps([fm.get("models"), fm.get("thinking_levels")])
        if shape in seen:
            continue
        seen.add(shape)
        for label, mutated in _mutations(copy.deepcopy(fm)):
            expected = validator.is_valid(mutated)
            assert predicate(mutated) == expected, (path.name, label)
            valid += expected
            invalid += not expected
    assert valid > 20 and invalid > 300, (valid, invalid)


# Generated values: every JSON type, and a small pool that makes equal-but-different-looking
# items (1, 1.0, true; nested too) likely, where uniqueItems is easy to get wrong.
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.0, -0.0, 1.0, 2.0, -1.5, 0.5])
    | st.text(max_size=4)
    | st.sampled_from(["", "a", "ab", "😀", "😀😀", "\u00e9", "e\u0301"])
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    max_leaves=12,
)
_POOL = st.sampled_from([0, 1, 1.0, True, False, 0.0, "1", None, [1], [1.0], [True], {"a": 1}, {"a": 1.0}, {"a": True}, [], {}])
_DUPLICATES = st.lists(_POOL | st.lists(_POOL, max_size=2) | st.dictionaries(st.sampled_from("ab"), _POOL, max_size=2), max_size=5)

_KEYWORD_SCHEMAS: tuple[dict[str, Any], ...] = (
    {"minLength": 0},
    {"minLength": 1},
    {"minLength": 2},
    {"type": "string", "minLength": 3},
    {"minimum": 0},
    {"minimum": 1},
    {"minimum": -1.5},
    {"minimum": 0.5},
    {"type": "integer", "minimum": 0},
    {"uniqueItems": True},
    {"uniqueItems": False},
    {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
    {"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "array"}},
    {"if": {"type": "string"}, "then": {"minLength": 2}},
    {"if": {"type": "string"}, "else": {"minimum": 0}},
    {"if": {"minimum": 0}},
    {"then": False, "else": False},
    {"if": {"properties": {"a": {"const": 1}}}, "then": {"required": ["b"]}, "else": {"not": {"required": ["b"]}}},
    {"if": True, "then": False},
    {"if": False, "then": False, "else": {"type": "object"}},
    {"not": {"type": "null"}},
    {"not": {"required": ["a"]}},
    {"not": {}},
    {"not": False},
    {"not": {"not": {"minimum": 0}}},
    {"not": {"uniqueItems": True}},
    {"anyOf": [{"minLength": 2}, {"minimum": 1}, {"uniqueItems": True}]},
    {"items": {"minimum": 0}, "minLength": 1, "minimum": 0, "uniqueItems": True},
)


def _json_normal(value: Any) -> str:
    """The value in a canonical JSON text, integral floats as integers: two values are JSON-equal
    exactly when these are equal (an equality independent of the module's own)."""

    def normal(v: Any) -> Any:
        if type(v) is float and v.is_integer():
            return int(v)
        if type(v) is list:
            return [normal(x) for x in v]
        if type(v) is dict:
            return {k: normal(x) for k, x in v.items()}
        return v

    return json.dumps(normal(value), sort_keys=True)


def _has_json_duplicate(value: Any) -> bool:
    return type(value) is list and len({_json_normal(v) for v in value}) < len(value)


@pytest.mark.parametrize("schema", _KEYWORD_SCHEMAS, ids=json.dumps)
@PROPERTY
@given(value=_JSON | _DUPLICATES)
def test_keywords_match_jsonschema_on_generated_values(schema: dict[str, Any], value: Any) -> None:
    validator, predicate = _both(schema)
    assert predicate(value) == validator.is_valid(value)


@PROPERTY
@given(value=_DUPLICATES | _JSON)
def test_unique_items_is_json_equality_but_where_jsonschema_misses_a_duplicate(value: Any) -> None:
    validator, predicate = _both({"uniqueItems": True})
    unique = predicate(value)
    if type(value) is not list or not _has_json_duplicate(value):
        assert unique
    elif unique:  # the one corner, see the test below
        assert validator.is_valid(value)
        assert any(type(v) is list or type(v) is dict for v in value)


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        ({"minLength": 2}, "😀", False),  # one code point, two UTF-16 units
        ({"minLength": 1}, "😀", True),
        ({"minLength": 2}, "e\u0301", True),  # two code points, one grapheme
        ({"minLength": 1}, 5, True),
        ({"minimum": 0}, -1, False),
        ({"minimum": 0}, -0.0, True),
        ({"minimum": 0}, False, True),
        ({"minimum": 1}, True, True),
        ({"minimum": 0}, "-1", True),
        ({"minimum": 2**53}, 2**53 + 1, True),
        ({"minimum": 2**53 + 1}, float(2**53), False),
        ({"uniqueItems": True}, [1, 1.0], False),
        ({"uniqueItems": True}, [1, True], True),
        ({"uniqueItems": True}, [0, False], True),
        ({"uniqueItems": True}, [True, True], False),
        ({"uniqueItems": True}, [{"a": [1]}, {"a": [1.0]}], False),
        ({"uniqueItems": True}, [{"a": [1]}, {"a": [True]}], True),
        ({"uniqueItems": True}, [[], {}], True),
        ({"uniqueItems": True}, [{"a": 1, "b": 2}, {"b": 2, "a": 1}], False),
        ({"uniqueItems": True}, "aa", True),
        ({"if": {"minimum": 0}, "then": {"type": "integer"}}, 1.5, False),
        ({"if": {"minimum": 0}, "then": {"type": "integer"}}, -1.5, True),
        ({"then": False}, 1, True),
        ({"not": {"type": "string"}}, "x", False),
    ],
)
def test_keyword_semantics_match_jsonschema(schema: dict[str, Any], value: Any, expected: bool) -> None:
    assert _js(schema).is_valid(value) == expected
    assert compile_schema(schema)(value) == expected


def test_a_duplicate_jsonschema_misses_is_missed_too() -> None:
    # jsonschema sorts the items and compares neighbours; Python's ordering takes the nested
    # true for 1, so the two [1] end up apart. Rejecting the array would be right by JSON
    # equality but looser than jsonschema under `not`, so the predicate copies the verdict.
    value = [[1], [True], [1]]
    assert _js({"uniqueItems": True}).is_valid(value)
    assert compile_schema({"uniqueItems": True})(value)
    assert not _js({"not": {"uniqueItems": True}}).is_valid(value)
    assert not compile_schema({"not": {"uniqueItems": True}})(value)
    assert not compile_schema({"uniqueItems": True})([[1], [1], [True]])


@pytest.mark.parametrize(
    "schema",
    [
        {"pattern": "^a"},
        {"type": "string", "format": "date-time"},
        {"maxLength": 3},
        {"exclusiveMinimum": 0},
        {"oneOf": [{}]},
        {"allOf": [{}]},
        {"minLength": 1.5},
        {"minLength": True},
        {"minLength": -1},
        {"minimum": "0"},
        {"minimum": True},
        {"uniqueItems": 1},
        {"not": {"pattern": "^a"}},
        {"if": {"format": "email"}, "then": {}},
        {"if": {}, "then": {"maxItems": 1}},
        {"if": {}, "else": {"prefixItems": []}},
        {"properties": {"a": {"not": {"multipleOf": 2}}}},
        {"$defs": {"n": {"pattern": "x"}}, "$ref": "#/$defs/n"},
    ],
    ids=json.dumps,
)
def test_keywords_it_does_not_know_are_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(UnsupportedSchema):
        compile_schema(schema)
