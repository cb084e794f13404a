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
    head = header if header is not None else {
        "type": "session",
        "version": version,
        "id": "11111111-2222-4333-8444-555555555555",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/work",
    }
    out = [orjson.dumps(head)] if head else []
    for line in lines:
        out.append(line if isinstance(line, bytes) else orjson.dumps(line))
    return b"\n".join(out) + b"\n"


@pytest.fixture(scope="session")
def shared() -> Path:
    assert SHARED.is_dir(), f"the reference material is missing: {SHARED}"
    return SHARED
