"""piconv's context equals pi's own buildSessionContext() on every corpus file.

The goldens in tests/oracle/goldens are pi 1.6.0's output (tests/oracle/oracle.mjs with
--deterministic-ids); tests/test_oracle_live.py re-runs pi so they cannot drift.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import piconv
import pytest
from conftest import GOLDENS, corpus_files, corpus_ids, golden_for
from piconv.pi.context import context_to_pi

pytestmark = pytest.mark.shared  # every test here reads the reference material


def canonical(value: object) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


@pytest.mark.parametrize("path", corpus_files(), ids=corpus_ids())
def test_context_at_the_leaf_is_pis(path: Path) -> None:
    golden = golden_for(path)
    assert "loadError" not in golden, golden.get("loadError")
    doc = piconv.load(path)
    assert canonical(context_to_pi(doc.context())) == canonical(golden["context"])
    if "leafId" in golden:
        assert doc.leaf_id == golden["leafId"]


def _leaf_goldens() -> list[tuple[Path, str, Path]]:
    found = []
    for path in corpus_files():
        for golden in sorted((GOLDENS / path.parent.name).glob(f"{path.stem}.leaf-*.json")):
            found.append((path, golden.name.split(".leaf-")[1][: -len(".json")], golden))
    return found


@pytest.mark.parametrize(
    ("path", "leaf", "golden"), _leaf_goldens(), ids=lambda v: getattr(v, "name", str(v))
)
def test_context_at_every_other_leaf_is_pis(path: Path, leaf: str, golden: Path) -> None:
    expected = orjson.loads(golden.read_bytes())
    doc = piconv.load(path)
    assert canonical(context_to_pi(doc.context(leaf))) == canonical(expected["context"])


def test_there_are_leaf_goldens() -> None:
    assert len(_leaf_goldens()) >= 3


@pytest.mark.parametrize("path", corpus_files()[:3] + corpus_files()[-3:], ids=lambda p: p.stem)
def test_inspect_context_command_prints_the_same_json_value(path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "piconv", "inspect", str(path), "--context", "--json"],
        check=True,
        capture_output=True,
    ).stdout
    assert canonical(orjson.loads(out)) == canonical(golden_for(path)["context"])
