"""The yes/no request validator (piconv.schemacheck on the request schema) agrees with jsonschema.

It runs on every output; jsonschema only when it says no. So it must never say yes where
jsonschema finds an error: checked on every corpus output with several targets and on
outputs mutated in the ways a writer could go wrong (unknown members, wrong types, missing
members, wrong role constants, booleans for numbers).
"""

from __future__ import annotations

import copy
import io
from collections.abc import Iterator
from typing import Any

import jsonschema
import orjson
import piconv
import pytest
from conftest import corpus_files
from piconv.converters.openai import _errors, _valid, standard_part
from piconv.schemacheck import UnsupportedSchema, compile_schema

_TARGETS: tuple[dict[str, Any], ...] = (
    {},
    {"target": "openai/o3-mini"},
    {"target": "deepseek/deepseek-reasoner"},
    {"compat": ["requiresThinkingAsText=true", "input=text"]},
)


def _outputs() -> Iterator[Any]:
    for path in corpus_files():
        for options in _TARGETS:
            out = io.BytesIO()
            try:
                piconv.convert(str(path), "openai", out, options, validate=False)
            except piconv.PiconvError:
                continue
            yield standard_part(orjson.loads(out.getvalue()))


_ODD: tuple[Any, ...] = (None, 1, 1.5, True, "s", [], {}, [{"x": 1}])


def _mutations(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    # Messages are checked one by one, so a window of them keeps each mutation small.
    body = {**body, "messages": body["messages"][:6]}
    yield {**body, "unexpected": 1}
    yield {k: v for k, v in body.items() if k != "model"}
    messages = body["messages"]
    for i, message in enumerate(messages):
        for key in list(message):
            for odd in _ODD:
                new = copy.deepcopy(body)
                new["messages"][i][key] = odd
                yield new
            new = copy.deepcopy(body)
            del new["messages"][i][key]
            yield new
        new = copy.deepcopy(body)
        new["messages"][i]["colour"] = "red"
        yield new
        content = message.get("content")
        if isinstance(content, list) and content:
            for key in list(content[0]):
                for odd in _ODD:
                    new = copy.deepcopy(body)
                    new["messages"][i]["content"][0][key] = odd
                    yield new
        for call in message.get("tool_calls", ())[:1]:
            for odd in _ODD:
                new = copy.deepcopy(body)
                new["messages"][i]["tool_calls"][0]["function"]["arguments"] = odd
                yield new
            new = copy.deepcopy(body)
            new["messages"][i]["tool_calls"][0]["type"] = "custom"
            yield new
            assert call
    for tool in body.get("tools", ())[:1]:
        for odd in _ODD:
            new = copy.deepcopy(body)
            new["tools"][0]["function"]["parameters"] = odd
            yield new
        assert tool


def test_the_committed_schema_compiles() -> None:
    from piconv.converters.openai import _predicates

    root, by_role = _predicates()
    assert set(by_role) >= {"system", "user", "assistant", "tool", "developer"}
    assert callable(root)


def test_same_verdict_as_jsonschema_on_outputs_and_mutations(shared: Any) -> None:
    seen = valid = invalid = 0
    for body in _outputs():
        assert _valid(body) and not list(_errors(body))
        seen += 1
        for mutated in _mutations(body):
            errors = list(_errors(mutated))
            assert _valid(mutated) == (not errors), (mutated.get("messages", [None])[:1], errors[:2])
            valid += not errors
            invalid += bool(errors)
    assert seen >= 40 and invalid > 1000 and valid > 10, (seen, valid, invalid)


def test_keywords_it_does_not_know_are_refused() -> None:
    for schema in ({"pattern": "^a"}, {"type": "string", "maxLength": 1}, {"oneOf": [{}]}, {"$ref": "http://x"}):
        with pytest.raises(UnsupportedSchema):
            compile_schema(schema)
    with pytest.raises(UnsupportedSchema):
        compile_schema({"type": "decimal"})


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "integer"}, 3),
        ({"type": "integer"}, 3.0),
        ({"type": "integer"}, 3.5),
        ({"type": "integer"}, True),
        ({"type": "number"}, False),
        ({"const": True}, 1),
        ({"const": 1}, True),
        ({"const": 1}, 1.0),
        ({"enum": ["a", 0]}, False),
        ({"enum": [[1, 2]]}, [1, 2]),
        ({"type": ["string", "null"]}, None),
        ({"items": {"type": "string"}}, ["a", 1]),
        ({"items": {"type": "string"}}, "not a list"),
        ({"properties": {"a": {"type": "string"}}, "required": ["a"]}, {"a": "x"}),
        ({"properties": {"a": {"type": "string"}}, "required": ["a"]}, {}),
        ({"properties": {}, "additionalProperties": False}, {"b": 1}),
        ({"properties": {}, "additionalProperties": {"type": "integer"}}, {"b": 1}),
        ({"anyOf": [{"type": "string"}, {"const": 2}]}, 2),
        ({"anyOf": [{"type": "string"}, {"const": 2}]}, 3),
        ({"$defs": {"n": {"anyOf": [{"type": "null"}, {"items": {"$ref": "#/$defs/n"}}]}}, "$ref": "#/$defs/n"}, [[None, [None]]]),
        ({"$defs": {"n": {"anyOf": [{"type": "null"}, {"type": "array", "items": {"$ref": "#/$defs/n"}}]}}, "$ref": "#/$defs/n"}, [[1]]),
    ],
)
def test_keyword_semantics_match_jsonschema(schema: dict[str, Any], value: Any) -> None:
    expected = jsonschema.Draft202012Validator(schema).is_valid(value)
    assert compile_schema(schema)(value) == expected
