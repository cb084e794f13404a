"""The library's calls for output in memory, leaf names and format inference."""

from __future__ import annotations

import io
import json
from pathlib import Path

import piconv
import pytest
from piconv import ir
from piconv.leaf import resolve_leaf

from .conftest import REPO

BRANCHING = REPO / "examples" / "branching.jsonl"


@pytest.fixture(scope="module")
def doc() -> ir.Document:
    return piconv.load(BRANCHING)


@pytest.mark.parametrize("fmt", ["openai", "markdown", "ir", "asf", "pi", "html"])
def test_convert_to_bytes_is_what_convert_writes(doc: ir.Document, fmt: str) -> None:
    data = piconv.convert_to_bytes(doc, fmt)
    buffer = io.BytesIO()
    piconv.convert(doc, fmt, buffer)
    assert data == buffer.getvalue() and len(data) > 100


def test_convert_to_bytes_from_a_path_and_bytes(doc: ir.Document) -> None:
    # read for the pi format, a file keeps its lines' bytes, and they are what is written
    assert piconv.convert_to_bytes(str(BRANCHING), "pi") == BRANCHING.read_bytes()
    assert piconv.convert_to_bytes(BRANCHING.read_bytes(), "pi") == BRANCHING.read_bytes()
    kept = piconv.load(BRANCHING, keep_source="bytes")
    assert piconv.convert_to_bytes(kept, "pi") == BRANCHING.read_bytes()
    # a document loaded without them is written in the writer's member order: the same values
    plain = piconv.convert_to_bytes(doc, "pi").splitlines()
    assert [json.loads(line) for line in plain] == [
        json.loads(line) for line in BRANCHING.read_bytes().splitlines()
    ]


def test_convert_without_a_target_says_what_to_call(doc: ir.Document) -> None:
    with pytest.raises(TypeError, match="convert_to_bytes"):
        piconv.convert(doc, "openai", None)  # type: ignore[arg-type]


def test_a_leaf_is_named_by_id_prefix_or_label(doc: ir.Document) -> None:
    labelled = {label: target for target, label in doc.labels().items()}
    target = labelled["option-A"]
    assert resolve_leaf(doc, target) == target
    assert resolve_leaf(doc, "option-A") == target
    assert resolve_leaf(doc, target[:5]) == target
    with pytest.raises(piconv.UsageError, match="prefix of 2 entry ids"):
        resolve_leaf(doc, "2")
    with pytest.raises(piconv.UsageError, match="no entry has this id"):
        resolve_leaf(doc, "zzz")


@pytest.mark.parametrize("fmt", ["openai", "markdown", "html"])
def test_every_leaf_taking_format_resolves_the_name(doc: ir.Document, fmt: str) -> None:
    target = {label: t for t, label in doc.labels().items()}["option-A"]
    by_label = piconv.convert_to_bytes(doc, fmt, {"leaf": "option-A"})
    by_id = piconv.convert_to_bytes(doc, fmt, {"leaf": target})
    by_prefix = piconv.convert_to_bytes(doc, fmt, {"leaf": target[:6]})
    assert by_label == by_id == by_prefix
    assert by_id != piconv.convert_to_bytes(doc, fmt)  # another branch than the file's leaf


@pytest.mark.parametrize("fmt", ["asf", "pi"])
def test_whole_tree_formats_refuse_a_leaf(doc: ir.Document, fmt: str) -> None:
    assert piconv.get_format(fmt).takes_leaf is False
    with pytest.raises(piconv.UsageError, match="whole tree"):
        piconv.convert_to_bytes(doc, fmt, {"leaf": "option-A"})


def test_ir_takes_a_leaf_for_its_context_only(doc: ir.Document) -> None:
    with pytest.raises(piconv.UsageError, match="--with-context"):
        piconv.convert_to_bytes(doc, "ir", {"leaf": "option-A"})
    value = piconv.convert_to_bytes(doc, "ir", {"leaf": "option-A", "with_context": True})
    target = {label: t for t, label in doc.labels().items()}["option-A"]
    assert f'"leaf_id":"{target}"'.encode() in value


@pytest.mark.parametrize(
    ("name", "expected"), [("out.md", "markdown"), ("x/Out.HTML", "html"), ("a.b.md", "markdown")]
)
def test_format_for_path(name: str, expected: str) -> None:
    assert piconv.format_for_path(name).name == expected


@pytest.mark.parametrize(
    ("name", "why"), [("out.json", "ir, openai"), ("out.jsonl", "asf, pi"), ("out", "no format")]
)
def test_format_for_path_refuses_when_not_exactly_one(name: str, why: str) -> None:
    with pytest.raises(piconv.UsageError, match=why):
        piconv.format_for_path(name)


def test_content_parts_carry_their_type() -> None:
    from piconv.irformat import to_json

    parts = [
        ir.Text(text="a"),
        ir.Image(data="", media_type="image/png"),
        ir.Reasoning(text="r"),
        ir.ToolCall(name="t"),
    ]
    for part in parts:
        assert to_json(part)["type"] == part.type
    assert [p.type for p in parts] == ["text", "image", "reasoning", "tool_call"]
    unknown = ir.UnknownPart(value={"type": "audio"})
    assert unknown.type == "audio" and to_json(unknown)["type"] == "unknown"


def test_stdout_dash_is_not_a_file(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    import os

    from piconv.cli import main

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main([str(BRANCHING), "--to", "pi", "-o", "-", "-q"]) == 0
    finally:
        os.chdir(cwd)
    assert capsysbinary.readouterr().out == piconv.convert_to_bytes(BRANCHING, "pi")
    assert not (tmp_path / "-").exists()
