"""The OpenAI request schema is generated from the SDK types; outputs validate against it
and load with the SDK's own types (what a real client accepts)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import io
from pathlib import Path
from typing import Any

import orjson
import piconv
import pytest
from piconv.converters.openai import check, standard_part

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "converters" / "openai" / "schema" / "chat-request.schema.json"
CONSTRAINTS = REPO / "requirements" / "test-constraints.txt"

pytest.importorskip("openai")
pytest.importorskip("pydantic")


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location(
        "gen_openai_schema", REPO / "scripts" / "gen_openai_schema.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pinned(name: str) -> str:
    """The version requirements/test-constraints.txt pins ``name`` to ("not pinned" if none)."""
    pins = []
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        if line.split("==", 1)[0].strip().lower() == name:
            pins.append(line.split("==", 1)[1].strip())  # with its marker, if it has one
    return " or ".join(pins) or "not pinned"


def test_committed_schema_is_regenerated_identically() -> None:
    """The schema names no SDK version: under the pinned openai and pydantic the generator
    writes it byte for byte, and a release that leaves the types alone changes nothing."""
    generator = _generator()
    installed = {name: importlib.metadata.version(name) for name in ("openai", "pydantic")}
    found = ", ".join(f"{n} {v} (pinned: {_pinned(n)})" for n, v in installed.items())
    assert generator.render() == SCHEMA.read_text(), f"installed: {found}; {generator.STALE}"


def test_schema_is_closed() -> None:
    schema = orjson.loads(SCHEMA.read_bytes())

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                assert node.get("additionalProperties") is False, node.get("title")
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    assert schema["additionalProperties"] is False


def test_unknown_member_is_rejected() -> None:
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi", "colour": "red"}]}
    assert check(orjson.dumps(body))
    assert check(orjson.dumps({**body, "messages": [{"role": "user", "content": "hi"}]})) == []


def _sdk_adapter() -> Any:
    from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolUnionParam
    from pydantic import TypeAdapter

    return TypeAdapter(list[ChatCompletionMessageParam]), TypeAdapter(list[ChatCompletionToolUnionParam])


CASES = [
    ("pi-generated/basic.jsonl", {}),
    ("pi-generated/extensions.jsonl", {}),
    ("pi-generated/images.jsonl", {}),
    ("pi-generated/images.jsonl", {"compat": ["input=text"]}),
    ("pi-generated/basic.jsonl", {"target": "openai/o3-mini"}),
    ("pi-generated/basic.jsonl", {"target": "kimi-coding/k3"}),
    ("pi-generated/models.jsonl", {"target": "deepseek/deepseek-flash"}),
    ("pi-generated/basic.jsonl", {"target": "openai/chat-latest"}),
    ("pi/badlogic__pi-mono__session.jsonl", {"target": "openrouter/anthropic/claude-fable-5"}),
    ("pi/badlogic__pi-mono__large-session.jsonl", {}),
    ("pi/castai__kimchi-dev__session.jsonl", {"compat": ["requiresToolResultName=true"]}),
]


@pytest.mark.shared
@pytest.mark.parametrize("name,opts", CASES, ids=[f"{n}-{sorted(o.items())}" for n, o in CASES])
def test_outputs_load_with_the_sdk_types(shared: Path, name: str, opts: dict[str, Any]) -> None:
    out = io.BytesIO()
    piconv.convert(str(shared / "corpus" / name), "openai", out, opts)  # schema check included
    body = standard_part(orjson.loads(out.getvalue()))
    messages, tools = _sdk_adapter()
    # TypedDicts: validate_python checks every member's type and required members.
    messages.validate_python(body["messages"], strict=True)
    tools.validate_python(body.get("tools", []), strict=True)


@pytest.mark.shared
def test_non_standard_members_are_only_the_documented_ones(shared: Path) -> None:
    out = io.BytesIO()
    piconv.convert(
        str(shared / "corpus" / "pi-generated" / "branching.jsonl"),
        "openai",
        out,
        {"target": "kimi-coding/k3", "compat": ["requiresToolResultName=true"]},
    )
    body = orjson.loads(out.getvalue())
    assert any(m["role"] == "system" and "tools" in m for m in body["messages"])  # Kimi declaration
    assert all("reasoning_content" in m for m in body["messages"] if m["role"] == "assistant")
    assert all("name" in m for m in body["messages"] if m["role"] == "tool")
    assert check(out.getvalue()) == []
