"""``--to pi`` from any reader: pi 1.6.0 itself (tests/oracle) opens what piconv writes
with the context piconv computes for the source.

- Every ASF reference example (another writer's files): pi's context of ``--to pi`` is
  the source's context in pi's shape (``piconv inspect --context``), pi's leaf is the
  source's, every branch, label and name is kept, pi-ai converts the context without
  an error, and what pi cannot hold is in the report.
- Every corpus session through piconv's own ASF (pi → ASF → pi): pi says exactly what
  it says of the session itself (the committed goldens of tests/oracle).

Needs Node 22 and the oracle's install (``python tests/oracle/run.py --install``); with
CI=true a missing install is a failure, locally a skip.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import piconv
import pytest
from piconv.pi.context import context_as_pi

from .conftest import SHARED

_RUN_PATH = Path(__file__).resolve().parent / "oracle" / "run.py"
_spec = importlib.util.spec_from_file_location("piconv_oracle_run_export", _RUN_PATH)
assert _spec and _spec.loader
oracle = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = oracle
_spec.loader.exec_module(oracle)

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
EXAMPLES = sorted((SHARED / "reference" / "asf" / "examples").glob("*.jsonl"))
CORPUS = oracle.corpus_files(SHARED)


def _unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"{reason} (CI=true, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


def _oracle_ready() -> None:
    if not IN_CI and not oracle.is_installed():
        _unavailable(
            f"the pi oracle is not installed in {oracle.oracle_dir()}: run python {_RUN_PATH} --install"
        )
    try:
        oracle.ensure_installed()
    except oracle.OracleError as exc:
        _unavailable(str(exc))


def _sorted(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


@pytest.fixture(scope="module")
def foreign(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, tuple[Any, piconv.Report, Path, dict[str, Any]]]:
    """Each reference example: its document, the report and file of ``--to pi``, and
    what pi 1.6.0 says of that file."""
    _oracle_ready()
    folder = tmp_path_factory.mktemp("foreign")
    made = {}
    for path in EXAMPLES:
        out = folder / path.name
        report = piconv.convert(str(path), "pi", str(out))
        made[path.stem] = (piconv.load(str(path)), report, out)
    said = oracle.run_many((out, ()) for _d, _r, out in made.values())
    return {name: (*made[name], data) for name, data in zip(made, said, strict=True)}


@pytest.mark.shared
@pytest.mark.parametrize("example", [p.stem for p in EXAMPLES])
def test_pi_opens_a_foreign_session_with_the_sources_context(foreign: dict[str, Any], example: str) -> None:
    doc, report, out, said = foreign[example]
    assert "loadError" not in said and said["header"]["version"] == 3
    assert _sorted(said["context"]) == _sorted(context_as_pi(doc))
    # pi resumes at the last entry: the source's leaf (or the settings written below it)
    written = piconv.load(str(out))
    assert said["leafId"] == written.leaf_id == written.entries[-1].id
    assert doc.leaf_id in {e.id for e in written.path()}
    # what pi-ai would send: no conversion fails on what piconv wrote
    for key in ("llm_messages", "openai_chat", "responses_input"):
        assert not (isinstance(said.get(key), dict) and "error" in said[key]), (key, said.get(key))
    assert "context-differs" not in report.losses


@pytest.mark.shared
@pytest.mark.parametrize("example", [p.stem for p in EXAMPLES])
def test_every_branch_label_and_name_is_kept(foreign: dict[str, Any], example: str) -> None:
    doc, report, out, _said = foreign[example]
    written = piconv.load(str(out))
    assert written.session.source_version == 3 and written.session.id == doc.session.id
    assert len(written.leaves()) == len(doc.leaves())
    assert written.labels() == doc.labels() and written.session_name() == doc.session_name()
    kept = {e.id for e in written.entries}
    assert {e.id for e in doc.entries} <= kept  # every entry, under its own id
    for entry in doc.entries:
        if entry.parent_id is not None:  # below its parent, or below settings written after it
            assert entry.parent_id in {e.id for e in written.path(entry.id)}
    # another writer's members pi has no place for are reported, never "nothing lost"
    assert "member-not-kept" in report.losses and "nothing lost" not in report.summary()


@pytest.fixture(scope="module")
def through_asf(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, bytes, dict[str, Any]]]:
    """Every corpus session to ASF and back to pi: the file and what pi says of it."""
    _oracle_ready()
    if not CORPUS:
        _unavailable(f"no corpus under {SHARED / 'corpus'}")
    folder = tmp_path_factory.mktemp("through-asf")
    made = {}
    for corpus, path in CORPUS:
        asf = io.BytesIO()
        piconv.convert(str(path), "asf", asf)
        out = folder / f"{corpus}-{path.name}"
        piconv.convert(asf.getvalue(), "pi", str(out))
        made[f"{corpus}/{path.stem}"] = (path, out)
    said = oracle.run_many((out, ()) for _p, out in made.values())
    return {name: (*made[name], data) for name, data in zip(made, said, strict=True)}


@pytest.mark.shared
@pytest.mark.parametrize("name", [f"{c}/{p.stem}" for c, p in CORPUS])
def test_pi_reads_a_session_back_from_asf_as_it_reads_the_session(
    through_asf: dict[str, Any], name: str
) -> None:
    _path, _out, said = through_asf[name]
    got = oracle.keep(said, oracle.BASE_KEYS)
    want = oracle.read_golden(oracle.GOLDENS / f"{name}.json")
    assert got == want
