"""Redacted output, byte for byte: SHA-256 digests of every format's output of the seeded
session and of corpus sessions after ``piconv.redact``, recorded in
``tests/data/redact-digests.json``.

Work on the redaction's speed must leave these unchanged. The options name the home
directory and the user, so the digests do not depend on the machine that runs the test.
After a change meant to alter what is redacted, regenerate with
``PICONV_UPDATE_GOLDENS=1 python -m pytest tests/test_redact_digests.py`` and say why in
the commit.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import piconv
import pytest
from redact_seed import HOME, SECRETS, seeded_session

from .conftest import REPO, SHARED

pytestmark = pytest.mark.shared  # every test here reads the reference material

DIGESTS = REPO / "tests" / "data" / "redact-digests.json"
FORMATS = ("asf", "openai", "ir", "pi", "markdown", "html")
CORPUS = (
    "pi/badlogic__pi-mono__session.jsonl",
    "pi/Whamp__pi-session-recall__identifiers-tools.jsonl",
    "pi/Whamp__pi-session-recall__long-boundary.jsonl",
    "pi-generated/extensions.jsonl",
)
UPDATE = bool(os.environ.get("PICONV_UPDATE_GOLDENS"))
OPTIONS = {
    "values": [SECRETS["value"]],
    "patterns": [r"ACME-[0-9]{4}"],
    "homes": [HOME, "/Users/badlogic"],
    "users": [HOME.rsplit("/", 1)[1], "badlogic"],
}


def _recorded() -> dict[str, str]:
    return json.loads(DIGESTS.read_text(encoding="utf-8")) if DIGESTS.is_file() else {}


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    seeded = tmp_path_factory.mktemp("seed") / "seeded.jsonl"
    seeded.write_bytes(seeded_session())
    return {"seeded": seeded, **{name: SHARED / "corpus" / name for name in CORPUS}}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["seeded", *CORPUS])
def test_redacted_output_unchanged(
    name: str, fmt: str, sources: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = sources[name]
    if not path.is_file():
        pytest.fail(f"{path} is missing (PICONV_SHARED names the shared folder)")
    # loaded by file name alone: the IR records where the session came from
    monkeypatch.chdir(path.parent)
    result = piconv.redact(piconv.load(path.name), **OPTIONS)
    out = tmp_path / f"out.{fmt}"
    piconv.convert(result.document, fmt, str(out))
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    key = f"{name}:{fmt}"
    if UPDATE:
        digests = _recorded()
        digests[key] = digest
        DIGESTS.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return
    recorded = _recorded()
    assert key in recorded, f"no digest recorded for {key} (PICONV_UPDATE_GOLDENS=1 records it)"
    assert digest == recorded[key], f"{key}: the redacted {fmt} output changed"
    if name == "seeded":
        assert SECRETS["github-pat"].encode() not in out.read_bytes()
