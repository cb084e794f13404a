"""Shared fixtures: where the reference corpora are, and small session builders."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PICONV_SHARED", REPO.parent / "shared"))
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
    assert SHARED.is_dir(), f"the reference material is missing: {SHARED}"
    return SHARED


# ---------------------------------------------------------------------------------------------
# Without the reference material (a fresh clone with nothing beside it), the tests that read it
# are skipped with one line saying how to get it; in CI (CI=true) it must be there, and any
# test that needs it fails instead.

NEEDS_SHARED = ("SHARED", "corpus_files", "golden_for", "shared")
SHARED_MISSING = (
    f"needs the reference material at {SHARED} (the public pi corpus, the ASF reference examples "
    "and pi's goldens): put it beside the checkout as ../shared or set PICONV_SHARED"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if (SHARED / "corpus").is_dir() or os.environ.get("CI"):
        return
    skip = pytest.mark.skip(reason=SHARED_MISSING)
    sources: dict[Path, bool] = {}
    for item in items:
        path = Path(str(item.fspath))
        if path not in sources:
            text = path.read_text(encoding="utf-8") if path.suffix == ".py" else ""
            # a module that says HANDLES_MISSING_REFERENCE skips its own tests that need it
            sources[path] = "HANDLES_MISSING_REFERENCE" not in text and any(
                word in text for word in NEEDS_SHARED
            )
        if sources[path]:
            item.add_marker(skip, append=False)  # before the mark of a parameter set left empty


def pytest_report_header(config: pytest.Config) -> str:
    if (SHARED / "corpus").is_dir():
        return f"reference material: {SHARED}"
    if os.environ.get("CI"):
        return f"reference material MISSING at {SHARED}: the tests that need it fail (CI=true)"
    return f"reference material missing at {SHARED}: the tests that need it are skipped"
