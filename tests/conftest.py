"""Shared fixtures: where the reference corpora are, and small session builders."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PICONV_SHARED", REPO.parent / "shared"))
SHARED_PRESENT = (SHARED / "corpus").is_dir()
IN_CI = bool(os.environ.get("CI"))
SHARED_MISSING = (
    f"needs the reference material at {SHARED} (the public pi corpus, the ASF reference examples "
    "and the sessions of pi's goldens): put it beside the checkout as ../shared or set PICONV_SHARED"
)
CORPORA = ("pi", "pi-generated")
GOLDENS = REPO / "tests" / "oracle" / "goldens"


def corpus_files() -> list[Path]:
    files = []
    for corpus in CORPORA:
        files.extend(sorted((SHARED / "corpus" / corpus).glob("*.jsonl")))
    return files


def corpus_ids() -> list[str]:
    return [f"{p.parent.name}/{p.stem}" for p in corpus_files()]


def golden_for(path: Path, variant: str | None = None) -> dict:
    name = path.stem + (f".{variant}" if variant else "") + ".json"
    golden = GOLDENS / path.parent.name / name
    return orjson.loads(golden.read_bytes())


def session_bytes(*lines: object, header: dict | None = None, version: int = 3) -> bytes:
    """A pi session file from entry dicts (a header is added unless ``header`` is False-y {})."""
    head = (
        header
        if header is not None
        else {
            "type": "session",
            "version": version,
            "id": "11111111-2222-4333-8444-555555555555",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": "/work",
        }
    )
    out = [orjson.dumps(head)] if head else []
    for line in lines:
        out.append(line if isinstance(line, bytes) else orjson.dumps(line))
    return b"\n".join(out) + b"\n"


@pytest.fixture(scope="session")
def shared() -> Path:
    assert SHARED_PRESENT, SHARED_MISSING
    return SHARED


# ---------------------------------------------------------------------------------------------
# The tests that read the reference material carry the ``shared`` marker (registered in
# pyproject.toml; tests/test_suite_rules.py fails a test module that reads it unmarked).
# Without the material (a fresh clone with nothing beside it) they are skipped with one line
# saying how to get it; in CI (CI=true) the material must be there, and each of them fails.


@pytest.hookimpl(tryfirst=True)  # before the skip of a parameter set the missing corpus left empty
def pytest_runtest_setup(item: pytest.Item) -> None:
    if SHARED_PRESENT or item.get_closest_marker("shared") is None:
        return
    if IN_CI:
        pytest.fail(f"{SHARED_MISSING} (CI=true: a failure, not a skip)", pytrace=False)
    pytest.skip(SHARED_MISSING)  # raised here, so -ra folds every such skip into one line


def pytest_report_header(config: pytest.Config) -> str:
    if SHARED_PRESENT:
        return f"reference material: {SHARED}"
    if IN_CI:
        return f"reference material MISSING at {SHARED}: the tests marked `shared` fail (CI=true)"
    return f"reference material missing at {SHARED}: the tests marked `shared` are skipped"
