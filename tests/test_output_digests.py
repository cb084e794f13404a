"""Every format's output, byte for byte, on every corpus and hostile session: SHA-256
digests recorded in ``tests/data/output-digests.json``.

Work on speed or structure must leave these unchanged; only an issue that asks for a new
output may change a digest. After such a change, regenerate with
``PICONV_UPDATE_GOLDENS=1 python -m pytest tests/test_output_digests.py`` and say why in
the commit. (Markdown's own variants are held by ``test_markdown_bytes.py``.)
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import piconv
import pytest

from .conftest import REPO, corpus_files, corpus_ids

pytestmark = pytest.mark.shared  # every test here reads the reference material

DIGESTS = REPO / "tests" / "data" / "output-digests.json"
HOSTILE = sorted((REPO / "tests" / "data" / "hostile").glob("*.jsonl"))
EXAMPLES = sorted((REPO / "examples").glob("*.jsonl"))
SOURCES = corpus_files() + HOSTILE + EXAMPLES
IDS = corpus_ids() + [f"hostile/{p.stem}" for p in HOSTILE] + [f"examples/{p.stem}" for p in EXAMPLES]
FORMATS = ("asf", "openai", "ir", "pi", "html", "atif")
UPDATE = bool(os.environ.get("PICONV_UPDATE_GOLDENS"))


def _recorded() -> dict[str, str]:
    return json.loads(DIGESTS.read_text(encoding="utf-8")) if DIGESTS.is_file() else {}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("path", SOURCES, ids=IDS)
def test_output_unchanged(path: Path, fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The session is named by its file name alone, so an output that records where it
    # came from (the IR does) has the same bytes wherever the checkout and corpus are.
    monkeypatch.chdir(path.parent)
    out = tmp_path / f"out.{fmt}"
    piconv.convert(path.name, fmt, str(out))
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    key = f"{path.parent.name}/{path.stem}:{fmt}"
    if UPDATE:
        digests = _recorded()
        digests[key] = digest
        DIGESTS.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return
    recorded = _recorded()
    assert key in recorded, f"no digest recorded for {key} (PICONV_UPDATE_GOLDENS=1 records it)"
    assert digest == recorded[key], f"{key}: the {fmt} output changed"
