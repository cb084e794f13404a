"""``--to ir`` output has a JSON Schema (core/schema/ir.schema.json): every corpus, hostile
and example session's IR matches it, jsonschema-rs and jsonschema agree on it and on
mutations of it, the schema follows the dataclasses, and the references a schema cannot
check (parents, the leaf, context entries) are checked by code."""

from __future__ import annotations

import copy
import dataclasses
import io
import random
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
import piconv
import pytest
from conftest import REPO, corpus_files
from piconv import ir
from piconv.irformat import SCHEMA, check_ir
from piconv.jsonio import dumps
from piconv.validation import load_schema, parse_json

SOURCES = (
    corpus_files()
    + sorted((REPO / "tests" / "data" / "hostile").glob("*.jsonl"))
    + sorted((REPO / "examples").glob("*.jsonl"))
)
_ODD: tuple[Any, ...] = (None, -1, 1.5, True, "not-a-value", [], {}, [{"x": 1}])


def _schema() -> dict[str, Any]:
    return load_schema("piconv", SCHEMA)


def _ir(path: Path, **options: Any) -> bytes:
    out = io.BytesIO()
    piconv.convert(str(path), "ir", out, options)  # validated by default
    return out.getvalue()


@pytest.fixture(scope="module")
def outputs(shared: Any) -> list[Any]:
    return [parse_json(_ir(p, with_context=True)) for p in SOURCES]


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(_schema())


def test_the_schema_names_exactly_the_fields_the_dataclasses_have() -> None:
    defs = _schema()["$defs"]
    classes = [c for c in vars(ir).values() if isinstance(c, type) and dataclasses.is_dataclass(c)]
    tags = {"type", "role", "kind"}
    for cls in classes:
        if cls is ir.Document:
            continue
        names = {f.name for f in dataclasses.fields(cls)}
        props = set(defs[cls.__name__]["properties"])
        tag = props - names
        assert tag <= tags and len(tag) <= 1, (cls.__name__, tag)
        assert props - tag == names, cls.__name__
    document = {f.name for f in dataclasses.fields(ir.Document) if not f.name.startswith("_")} - {
        "context_builder",
        "input_path",  # where the file was read: kept for output safety, never written
        "notes",  # what filters left out, for a reader of an output; never written
        "source_lines",  # how the source's lines were spelled: for a writer of that format, never written
    }
    assert set(_schema()["properties"]) == document | {"piconv_ir", "context"}
    assert typing.get_args(ir.Body) and len(defs["body"]["allOf"]) == len(typing.get_args(ir.Body))
    assert len(defs["message"]["allOf"]) == len(typing.get_args(ir.Message))
    assert len(defs["part"]["allOf"]) == len(typing.get_args(ir.Part))


@pytest.mark.shared
@pytest.mark.parametrize("path", SOURCES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_session_s_ir_matches(path: Path) -> None:
    for options in ({}, {"with_context": True}, {"pretty": True}):
        assert check_ir(_ir(path, **options)) == []


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key)
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield (*path, i)
            yield from _paths(item, (*path, i))


def _mutations(doc: dict[str, Any], rng: random.Random, count: int) -> Iterator[dict[str, Any]]:
    # a window of entries keeps each mutation small; the skeleton members stay mutable too
    doc = {
        **doc,
        "entries": doc["entries"][:8],
        "context": {**doc["context"], "messages": doc["context"]["messages"][:4]},
    }
    paths = [p for p in _paths(doc) if not (len(p) > 1 and p[0] in ("session",) and p[1] == "extra")]
    for path in rng.sample(paths, min(count, len(paths))):
        new = copy.deepcopy(doc)
        parent = new
        for step in path[:-1]:
            parent = parent[step]
        how = rng.choice(("replace", "drop", "unknown"))
        if how == "drop":
            del parent[path[-1]]
        elif how == "unknown" and isinstance(parent[path[-1]], dict):
            parent[path[-1]]["colour"] = "red"
        else:
            parent[path[-1]] = rng.choice(_ODD)
        yield new


@pytest.mark.shared
def test_jsonschema_rs_and_jsonschema_agree_on_mutations(outputs: list[Any]) -> None:
    fast = jsonschema_rs.validator_for(_schema())
    slow = jsonschema.Draft202012Validator(_schema())
    rng = random.Random(14)
    valid = invalid = 0
    for doc in outputs:
        try:
            assert fast.is_valid(doc)
        except UnicodeEncodeError:  # a lone surrogate kept from the source: jsonschema judges it
            continue
        for mutated in _mutations(doc, rng, 25):
            verdict = fast.is_valid(mutated)
            assert verdict == slow.is_valid(mutated)
            errors = check_ir(dumps(mutated))
            assert verdict == (not errors) or (verdict and errors and "no entry has the id" in errors[0])
            valid += verdict
            invalid += not verdict
    assert invalid > 200 and valid > 20, (valid, invalid)


def test_what_the_schema_cannot_say_is_checked() -> None:
    doc = parse_json(_ir(REPO / "examples" / "branching.jsonl", with_context=True))
    assert check_ir(dumps(doc)) == []
    first, second = doc["entries"][0]["id"], doc["entries"][1]["id"]
    cases = {
        "entries/1/id": lambda d: d["entries"][1].update(id=first),
        "entries/1/parent_id": lambda d: d["entries"][1].update(parent_id="nowhere"),
        "leaf_id": lambda d: d.update(leaf_id="nowhere"),
        "context/messages/0/entry_id": lambda d: d["context"]["messages"][0].update(entry_id="nowhere"),
    }
    for where, mutate in cases.items():
        bad = copy.deepcopy(doc)
        mutate(bad)
        errors = check_ir(dumps(bad))
        assert any(e.startswith(f"line 1: {where}: ") for e in errors), (where, errors)
    assert second


def test_schema_errors_name_their_path() -> None:
    doc = parse_json(_ir(REPO / "examples" / "basic.jsonl"))
    i = next(i for i, e in enumerate(doc["entries"]) if e["body"]["kind"] == "message")
    doc["entries"][i]["body"]["message"]["timestamp"] = "yesterday"
    doc["entries"][0]["origin"]["colour"] = "red"
    errors = check_ir(dumps(doc))
    assert any(e.startswith(f"line 1: entries/{i}/body/message/timestamp: ") for e in errors), errors
    assert any(e.startswith("line 1: entries/0/origin: ") for e in errors), errors
    assert check_ir(b"not json")[0].startswith("line 1: not JSON")
    assert check_ir(dumps({**doc, "piconv_ir": [9, 0]}))


def test_a_conversion_whose_ir_breaks_the_schema_fails(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import piconv.irformat

    real = piconv.irformat.document_to_json
    monkeypatch.setattr(piconv.irformat, "document_to_json", lambda doc: {**real(doc), "lines_read": "many"})
    target = tmp_path / "out.json"
    with pytest.raises(piconv.ValidationFailed, match="lines_read"):
        piconv.convert(str(REPO / "examples" / "basic.jsonl"), "ir", str(target))
    assert not target.exists()
    piconv.convert(str(REPO / "examples" / "basic.jsonl"), "ir", str(target), validate=False)
    assert parse_json(target.read_bytes())["lines_read"] == "many"
