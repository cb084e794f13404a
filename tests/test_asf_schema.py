"""jsonschema-rs (the converter's engine, ``asf.schemas``) gives jsonschema's verdict on the
ASF schema: on every line piconv writes for every corpus file, on the reference examples, and
on a few thousand mutated lines (a member deleted, a value of another type, a pattern
broken). Errors come with their JSON path; a conversion and a validation of a valid file
never import jsonschema.
"""

from __future__ import annotations

import io
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
from conftest import SHARED, corpus_files
from piconv.api import convert
from piconv.converters.asf import schemas
from piconv.converters.asf.filecheck import validate_asf

pytestmark = pytest.mark.shared  # every test here reads the reference material

EXAMPLES = sorted((SHARED / "reference" / "asf" / "examples").glob("*.jsonl"))


def _reference() -> Any:
    schema = schemas.schema()
    return jsonschema.validators.validator_for(schema)(schema)


REFERENCE = _reference()


def _agree(value: Any) -> bool:
    """Both verdicts, asserted equal; the verdict."""
    verdict = schemas.is_valid(value)
    assert verdict == REFERENCE.is_valid(value), value
    return verdict


def _written(path: Path) -> list[dict[str, Any]]:
    out = io.BytesIO()
    convert(path, "asf", out, validate=False)
    return [orjson.loads(raw) for raw in out.getvalue().splitlines()]


@pytest.fixture(scope="module")
def lines() -> list[dict[str, Any]]:
    out = []
    for path in corpus_files():
        out.extend(_written(path))
    for path in EXAMPLES:
        for raw in path.read_bytes().splitlines():
            try:
                out.append(orjson.loads(raw))
            except orjson.JSONDecodeError:
                continue  # the truncated example
    return out


def test_every_written_and_reference_line_is_valid_for_both(lines: list[dict[str, Any]]) -> None:
    assert len(lines) > 5000
    assert all(_agree(line) for line in lines)


# A value of each JSON type, and strings that break the schema's patterns (hash, ts, format,
# namespaced type) or its enums, and ones that keep to them.
WRONG: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1.5,
    2.0,
    2**60,
    "",
    "x",
    [],
    [{}],
    {},
    {"type": "x"},
    "sha256:" + "0" * 64,
    "sha256:" + "A" * 64,
    "sha256:" + "0" * 63,
    "sha256:" + "٣" * 64,
    "2026-01-01T00:00:00Z",
    "2026-01-01T00:00:00.50Z",
    "2026-01-01T00:00:60Z",
    "2026-01-01 00:00:00Z",
    "2026-01-01T00:00:0٣Z",
    "2026-01-01T00:00:00+01:00",
    "agentsession/0.11",
    "agentsession/x",
    "openresponses/1",
    "x-openresponses/1",
    "pi:x",
    "x:",
    ":x",
    "é:x",
    "completed",
    "done",
    "user",
    "tool",
]


def _paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    if depth > 3:
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


def _mutated(value: Any, path: tuple[Any, ...], new: Any, delete: bool = False) -> Any:
    copy = orjson.loads(orjson.dumps(value))
    node = copy
    for step in path[:-1]:
        node = node[step]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = new
    return copy


def _samples(values: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line of every (type, item type, role, member set) shape."""
    by_shape: dict[Any, list[dict[str, Any]]] = {}
    for v in values:
        item = v.get("item") if type(v.get("item")) is dict else {}
        by_shape.setdefault((v.get("type"), item.get("type"), item.get("role"), tuple(sorted(v))), []).append(
            v
        )
    rng = random.Random(7)
    return [x for group in by_shape.values() for x in rng.sample(group, 1)]


def test_mutated_lines_get_the_same_verdict(lines: list[dict[str, Any]]) -> None:
    checked = rejected = 0
    for line in _samples(lines):
        for path in _paths(line):
            for mutant in [_mutated(line, path, None, delete=True)] + [
                _mutated(line, path, w) for w in WRONG
            ]:
                rejected += not _agree(mutant)
                checked += 1
    assert checked > 3000 and rejected > 1000, (checked, rejected)


def test_errors_name_their_json_path() -> None:
    header, *entries = _written(next(p for p in corpus_files() if b'"toolCall"' in p.read_bytes()))
    call = next(e for e in entries if e["type"] == "item" and e["item"]["type"] == "function_call")
    assert schemas.errors(_mutated(call, ("item", "call_id"), "")) == [
        'item/call_id: "" is shorter than 1 character'
    ]
    assert schemas.errors(_mutated(call, ("item", "name"), None, delete=True)) == [
        'item: "name" is a required property'
    ]
    assert schemas.errors(_mutated(header, ("format",), None, delete=True)) == [
        '(line): "format" is a required property'
    ]
    report = validate_asf(
        b"".join(orjson.dumps(v) + b"\n" for v in [header, _mutated(call, ("item", "type"), 5)])
    )
    assert [(i.line, i.code) for i in report if i.code == "schema"] == [(2, "schema")]
    assert any(i.message.startswith("item/type: 5 is not of type") for i in report)


def test_a_pattern_is_read_as_ecma_262() -> None:
    """The one place the two engines differ: Python's ``re`` (jsonschema) lets ``$`` match
    before a final newline; JSON Schema's patterns are ECMA 262, as jsonschema-rs reads them."""
    header = _written(corpus_files()[0])[0]
    bad = {**header, "created_at": header["created_at"] + "\n"}
    assert REFERENCE.is_valid(bad)
    assert not schemas.is_valid(bad)
    assert any(i.code == "schema" for i in validate_asf(orjson.dumps(bad) + b"\n"))


@pytest.mark.parametrize("command", ["convert", "validate"])
def test_jsonschema_is_not_imported(command: str) -> None:
    path = corpus_files()[0]
    if command == "convert":
        code = f"import io; from piconv.api import convert; convert({str(path)!r}, 'asf', io.BytesIO())"
    else:
        code = (
            "import io; from piconv.api import convert; from piconv.converters.asf.filecheck import validate_asf; "
            f"out = io.BytesIO(); convert({str(path)!r}, 'asf', out); assert validate_asf(out.getvalue()) == []"
        )
    code += "; import sys; print('jsonschema' in sys.modules, 'jsonschema_rs' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "True"]
