"""The two validators of the OpenAI request schema give the same verdict.

jsonschema-rs decides while converting; jsonschema names the errors (``piconv validate``
and a failed conversion). Checked on the output of every corpus session with several
targets and on mutations of them in the ways a writer could go wrong: an unknown member, a
required member dropped, a wrong type, a bad enum or constant value.
"""

from __future__ import annotations

import copy
import io
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
import orjson
import piconv
import pytest
from conftest import corpus_files
from piconv.converters.openai import SCHEMA, _errors, _valid, check, standard_part
from piconv.validation import load_schema

_TARGETS: tuple[dict[str, Any], ...] = (
    {},
    {"target": "openai/o3-mini"},
    {"target": "deepseek/deepseek-reasoner"},
    {"compat": ["requiresThinkingAsText=true", "input=text"]},
)
_ODD: tuple[Any, ...] = (None, 1, 1.5, True, "not-a-value", [], {}, [{"x": 1}])
PER_OUTPUT = 12  # mutations drawn per output (seeded): a few hundred over the corpus


def _outputs() -> Iterator[Any]:
    for path in corpus_files():
        for options in _TARGETS:
            out = io.BytesIO()
            try:
                piconv.convert(str(path), "openai", out, options, validate=False)
            except piconv.PiconvError:
                continue
            yield standard_part(orjson.loads(out.getvalue()))


def _members(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every member and array item below ``value``."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key)
            yield from _members(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield (*path, i)
            yield from _members(item, (*path, i))


def _mutations(body: dict[str, Any], rng: random.Random) -> Iterator[dict[str, Any]]:
    body = {**body, "messages": body["messages"][:6]}  # a window keeps each mutation small
    paths = list(_members(body))
    for path in rng.sample(paths, min(PER_OUTPUT, len(paths))):
        *parent_path, last = path
        how = rng.choice(("replace", "drop", "unknown"))
        new = copy.deepcopy(body)
        parent = new
        for step in parent_path:
            parent = parent[step]
        if how == "drop":
            del parent[last]
        elif how == "unknown" and isinstance(parent[last], dict):
            parent[last]["colour"] = "red"
        else:
            parent[last] = rng.choice(_ODD)
        yield new


@pytest.fixture(scope="module")
def validators() -> tuple[Any, Any]:
    schema = load_schema("piconv.converters.openai", SCHEMA)
    return jsonschema_rs.validator_for(schema), jsonschema.Draft202012Validator(schema)


@pytest.mark.shared
def test_same_verdict_on_outputs_and_mutations(shared: Any, validators: tuple[Any, Any]) -> None:
    fast, slow = validators
    rng = random.Random(14)
    seen = valid = invalid = 0
    for body in _outputs():
        assert fast.is_valid(body) and slow.is_valid(body)
        assert _valid(body) and not list(_errors(body))
        seen += 1
        for mutated in _mutations(body, rng):
            verdict = fast.is_valid(mutated)
            assert verdict == slow.is_valid(mutated), mutated.get("messages", [None])[:1]
            errors = list(_errors(mutated))
            assert _valid(mutated) == verdict == (not errors), errors[:2]
            valid += verdict
            invalid += not verdict
    assert seen >= 40 and invalid > 200 and valid > 20, (seen, valid, invalid)


def test_bad_enum_and_const_values_are_named_with_their_path() -> None:
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x", "detail": "huge"}}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "a", "type": "nope", "function": {"name": "f", "arguments": "{}"}}],
            },
        ],
    }
    errors = check(orjson.dumps(body))
    assert any(e.startswith("line 1: messages/0/content") for e in errors), errors
    assert any(e.startswith("line 1: messages/1/tool_calls/0") for e in errors), errors
    good = copy.deepcopy(body)
    good["messages"][0]["content"][0]["image_url"]["detail"] = "low"
    good["messages"][1]["tool_calls"][0]["type"] = "function"
    assert check(orjson.dumps(good)) == []


def test_a_lone_surrogate_is_judged_by_jsonschema() -> None:
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "\ud800"}]}
    assert _valid(body)
    assert check(b'{"model": "gpt-4o", "messages": [{"role": "user", "content": "\\ud800"}]}') == []
    assert not _valid({**body, "messages": [{"role": "user", "content": 1}]})


@pytest.mark.shared
def test_a_conversion_whose_request_breaks_the_schema_fails(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from piconv.converters.openai import request

    real = request.build_request
    monkeypatch.setattr(request, "build_request", lambda *a: {**real(*a), "temperature": "warm"})
    source = str(sorted(corpus_files())[0])
    target = tmp_path / "out.json"
    for options in ({}, {"messages_only": True}):
        if options:  # the messages alone are valid: only they are written and checked
            piconv.convert(source, "openai", str(target), options)
            continue
        with pytest.raises(piconv.ValidationFailed, match="temperature"):
            piconv.convert(source, "openai", str(target), options)
        assert not target.exists()
    piconv.convert(source, "openai", str(target), validate=False)
    assert orjson.loads(target.read_bytes())["temperature"] == "warm"
