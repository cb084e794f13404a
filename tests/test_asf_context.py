"""RFC 0001's context algorithm against the reference implementation's expectations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SHARED
from piconv.converters.asf.read.context import AsfFile

pytestmark = pytest.mark.shared  # every test here reads the reference material

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = SHARED / "reference" / "asf" / "examples"
EXPECTED = json.loads((ROOT / "tests" / "data" / "asf" / "context" / "expected.json").read_text())


def load(path: Path) -> AsfFile:
    """The file as the asf reader keeps it for RFC 0001's context algorithm."""
    return AsfFile.of(path)


CASES = [(name, leaf) for name, leaves in EXPECTED.items() for leaf in leaves]


@pytest.mark.parametrize(("name", "leaf"), CASES)
def test_reference_context(name: str, leaf: str) -> None:
    want = EXPECTED[name][leaf]
    asf = load(EXAMPLES / f"sessions_{name}.jsonl")
    by_legacy = {e["legacy_id"]: e for e in asf.entries}
    ctx = asf.context(by_legacy[leaf]["id"])
    legacy = {e["id"]: e["legacy_id"] for e in asf.entries}
    assert ctx.settings == want["settings"]
    assert [legacy[i] for i in ctx.entries] == want["entries"]
    assert [legacy[i] for i in ctx.item_entries] == want["item_entries"]
    for item, source in zip(ctx.items, ctx.item_entries, strict=True):
        entry = asf.index[source]
        assert item == entry.get("item", entry.get("summary"))
    if "first_item_text" in want:
        assert ctx.items[0]["content"][0]["text"] == want["first_item_text"]


def test_omit_items_leaves_entry_out() -> None:
    asf = load(EXAMPLES / "sessions_branch.jsonl")
    path = asf.path(asf.entries[6]["id"])
    from piconv.converters.asf.read.context import build_context

    omitted = path[1]["id"]
    path = [*path, {"type": "config", "id": "x", "parent": path[-1]["id"], "omit": {"items": [omitted]}}]
    ctx = build_context(path)
    assert omitted not in ctx.item_entries and ctx.omitted == [omitted]
