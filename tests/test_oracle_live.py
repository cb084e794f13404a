"""Re-run pi 1.6.0 (tests/oracle/oracle.mjs) on every corpus file, variant and leaf, and assert
its output equals the committed goldens, so the goldens other tests compare piconv against can
never drift from pi.

Needs Node 22 and the oracle's npm install (``python tests/oracle/run.py --install``). With
CI=true a missing install or corpus is a failure; locally the tests are skipped with the reason.
Regenerate goldens with ``python tests/oracle/regenerate.py``.
"""

from __future__ import annotations

import csv
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import pytest

_RUN_PATH = Path(__file__).resolve().parent / "oracle" / "run.py"
_spec = importlib.util.spec_from_file_location("piconv_oracle_run", _RUN_PATH)
assert _spec and _spec.loader
oracle = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = oracle
_spec.loader.exec_module(oracle)

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _unavailable(reason: str) -> None:
    # In CI a missing prerequisite must fail the run: a skipped oracle test is a silent hole.
    if IN_CI:
        pytest.fail(f"{reason} (CI=true, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


def _first_difference(got: Any, want: Any, path: str = "") -> str:
    """A short description of where two JSON values first differ."""
    if type(got) is not type(want):
        return f"{path or '<root>'}: {type(got).__name__} != {type(want).__name__}"
    if isinstance(got, dict):
        for key in list(want) + [k for k in got if k not in want]:
            if key not in got:
                return f"{path}.{key}: missing in the oracle output"
            if key not in want:
                return f"{path}.{key}: not in the golden"
            if got[key] != want[key]:
                return _first_difference(got[key], want[key], f"{path}.{key}")
    if isinstance(got, list):
        for i, (a, b) in enumerate(zip(got, want, strict=False)):
            if a != b:
                return _first_difference(a, b, f"{path}[{i}]")
        if len(got) != len(want):
            return f"{path}: length {len(got)} != {len(want)}"
    return f"{path or '<root>'}: {str(got)[:200]!r} != {str(want)[:200]!r}"


def _corpus_or_unavailable() -> list[tuple[str, Path]]:
    files = oracle.corpus_files()
    if not files:
        _unavailable(f"no corpus under {oracle.shared_dir() / 'corpus'} (set PICONV_SHARED)")
    return files


@pytest.fixture(scope="module")
def live() -> dict[str, dict[str, Any]]:
    """Oracle output for every golden, keyed by the golden's path under goldens/ (one batch run)."""
    files = _corpus_or_unavailable()
    if not IN_CI and not oracle.is_installed():
        _unavailable(
            f"the pi oracle is not installed in {oracle.oracle_dir()}: run python {_RUN_PATH} --install"
        )
    try:
        oracle.ensure_installed()
    except oracle.OracleError as exc:
        _unavailable(str(exc))
    jobs: list[tuple[str, Path, tuple[str, ...]]] = [
        (f"{corpus}/{path.stem}.json", path, ()) for corpus, path in files
    ]
    for entry in oracle.load_manifest():
        path = oracle.shared_dir() / "corpus" / entry["corpus"] / entry["file"]
        jobs.append((entry["golden"], path, tuple(entry["options"])))
    results = oracle.run_many((path, options) for _, path, options in jobs)
    return {golden: data for (golden, _, _), data in zip(jobs, results, strict=True)}


def _base_ids() -> list[str]:
    return [f"{corpus}/{path.stem}.json" for corpus, path in oracle.corpus_files()]


def _manifest() -> list[dict[str, Any]]:
    return oracle.load_manifest()


@pytest.mark.shared
@pytest.mark.parametrize("golden", _base_ids())
def test_base_golden_is_what_pi_says(live: dict[str, dict[str, Any]], golden: str) -> None:
    got = oracle.keep(live[golden], oracle.BASE_KEYS)
    want = oracle.read_golden(oracle.GOLDENS / golden)
    assert got == want, f"{golden} drifted from pi: {_first_difference(got, want)}"


@pytest.mark.shared
@pytest.mark.parametrize("entry", _manifest(), ids=lambda e: e["golden"])
def test_variant_and_leaf_goldens_are_what_pi_says(
    live: dict[str, dict[str, Any]], entry: dict[str, Any]
) -> None:
    data = live[entry["golden"]]
    if entry["kind"] == "leaf":
        got = oracle.keep(data, oracle.BASE_KEYS)
        want = oracle.read_golden(oracle.GOLDENS / entry["golden"])
    else:
        got = oracle.keep(data, oracle.VARIANT_KEYS)
        want = oracle.expected_variant(entry)
    assert got == want, f"{entry['golden']} drifted from pi: {_first_difference(got, want)}"


@pytest.mark.shared
def test_every_corpus_file_has_a_golden_and_no_golden_is_orphaned() -> None:
    files = _corpus_or_unavailable()
    expected = {oracle.base_golden(corpus, path) for corpus, path in files}
    expected |= {oracle.GOLDENS / e["golden"] for e in oracle.load_manifest()}
    present = set(oracle.GOLDENS.rglob("*.json"))
    assert not expected - present, (
        f"goldens missing (run regenerate.py): {sorted(map(str, expected - present))}"
    )
    assert not present - expected, f"goldens nobody checks: {sorted(map(str, present - expected))}"


def test_manifest_covers_the_required_variants() -> None:
    names = {e["name"] for e in oracle.load_manifest() if e["kind"] == "variant"}
    required = {
        "o3-mini",
        "thinking-as-text",
        "tool-result-name",
        "assistant-after-tool-result",
        "mid-convo-system",
        "no-image",
    }
    assert required <= names
    assert any(e["kind"] == "leaf" for e in oracle.load_manifest())


@pytest.mark.shared
def test_corpus_files_are_pristine() -> None:
    """The corpus is read-only reference: a file whose size differs from its MANIFEST.tsv was
    rewritten (pi migrates v1/v2 files in place when opened directly), and every golden built
    from it would be wrong."""
    _corpus_or_unavailable()
    changed = []
    for corpus in oracle.CORPORA:
        manifest = oracle.shared_dir() / "corpus" / corpus / "MANIFEST.tsv"
        with manifest.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                path = manifest.parent / row["file"]
                if path.is_file() and path.stat().st_size != int(row["bytes"]):
                    changed.append(
                        f"{corpus}/{row['file']}: {path.stat().st_size} bytes, MANIFEST says {row['bytes']}"
                    )
    assert not changed, "corpus files were modified: " + "; ".join(changed)
