"""piconv's usage figures equal pi 1.6.0's own on every corpus session (the oracle,
``oracle.mjs --usage``, runs pi's code on each file):

- the header of ``pi --export``'s page (``computeStats``): assistant messages' tokens and
  cost, user messages;
- ``/session`` (``AgentSession.getSessionStats``): every call's usage (assistant messages,
  tool results, compactions, branch summaries, usage records), which is what
  ``piconv stats`` counts; where pi itself fails (a session whose calls carry no cost
  object: pi 1.6.0 reads ``usage.cost.total``), the export header's figures still hold;
- ``/session``'s cost by model (``getUsageCostBreakdown``), which ``--by model`` gives.

Each session is read both ways piconv reads one (pi's fast scan where it covers the file,
and the whole document), through :func:`piconv.usage` and :func:`piconv.sessions`.
"""

from __future__ import annotations

import importlib.util
import io
import math
import os
import shutil
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import piconv
import pytest
from piconv.facts import Spend, scan_document

pytestmark = pytest.mark.shared

_RUN_PATH = Path(__file__).resolve().parent / "oracle" / "run.py"
_spec = importlib.util.spec_from_file_location("piconv_oracle_run_usage", _RUN_PATH)
assert _spec and _spec.loader
oracle = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = oracle
_spec.loader.exec_module(oracle)

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
TOOLS = "Tools/summaries"


def _unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"{reason} (CI=true, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def pi_usage() -> dict[str, dict[str, Any]]:
    files = oracle.corpus_files()
    if not files:
        _unavailable("no corpus (set PICONV_SHARED)")
    if not IN_CI and not oracle.is_installed():
        _unavailable(f"the pi oracle is not installed: run python {_RUN_PATH} --install")
    try:
        oracle.ensure_installed()
    except oracle.OracleError as exc:
        _unavailable(str(exc))
    results = oracle.run_many((path, ("--usage",)) for _corpus, path in files)
    return {path.name: data["usage"] for (_corpus, path), data in zip(files, results, strict=True)}


def _ids() -> list[str]:
    return [path.name for _corpus, path in oracle.corpus_files()]


def _path(name: str) -> Path:
    return next(path for _corpus, path in oracle.corpus_files() if path.name == name)


def _both_ways(path: Path) -> list[tuple[str, tuple[Spend, ...]]]:
    """The session's counted entries as pi's scan gives them (when it covers the file) and
    as the whole document gives them."""
    data = path.read_bytes()
    ways = [("document", scan_document(piconv.load(io.BytesIO(data), reader="pi")).spends)]
    fast = piconv.get_input_format("pi").scan(data, {})
    if fast is not None:
        ways.append(("scan", fast.spends))
    return ways


def _sums(spends: tuple[Spend, ...] | list[Spend]) -> dict[str, Any]:
    return {
        "input": sum(s.input for s in spends),
        "output": sum(s.output for s in spends),
        "cacheRead": sum(s.cache_read for s in spends),
        "cacheWrite": sum(s.cache_write for s in spends),
        "cost": sum(s.cost for s in spends),
    }


def _same_cost(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize("name", _ids())
def test_the_export_header_figures(pi_usage: dict[str, dict[str, Any]], name: str) -> None:
    want = pi_usage[name]["exportHeader"]
    if "error" in want:
        # pi 1.6.0's page fails on an assistant message whose content is no list
        # (``msg.content.filter``); the cost by model is compared below.
        assert "msg.content.filter is not a function" in want["error"]
        return
    for way, spends in _both_ways(_path(name)):
        got = _sums([s for s in spends if s.kind == "assistant"])
        assert {k: got[k] for k in want["tokens"]} == want["tokens"], way
        assert _same_cost(got["cost"], want["cost"]), (way, got["cost"], want["cost"])
        assert sum(s.turns for s in spends) == want["userMessages"], way


@pytest.mark.parametrize("name", _ids())
def test_the_session_command_figures(pi_usage: dict[str, dict[str, Any]], name: str) -> None:
    want = pi_usage[name]["sessionStats"]
    if "error" in want:
        # pi 1.6.0's /session throws on a call without a cost object (``usage.cost.total``;
        # piconv counts it as $0) and on an assistant message without usage
        # (``usage.input``; piconv counts nothing for it): the export header and the cost
        # by model are compared instead.
        assert any(f"(reading '{key}')" in want["error"] for key in ("total", "input")), want["error"]
        return
    for way, spends in _both_ways(_path(name)):
        got = _sums([s for s in spends if s.kind != "user"])
        assert {k: got[k] for k in ("input", "output", "cacheRead", "cacheWrite")} == {
            k: want["tokens"][k] for k in ("input", "output", "cacheRead", "cacheWrite")
        }, way
        assert sum(s.tokens for s in spends) == want["tokens"]["total"], way
        assert _same_cost(got["cost"], want["cost"]), way


@pytest.mark.parametrize("name", _ids())
def test_the_cost_by_model(pi_usage: dict[str, dict[str, Any]], name: str) -> None:
    want = pi_usage[name]["breakdown"]
    if isinstance(want, dict):  # pi failed on a call without a cost object, as above
        assert "(reading 'total')" in want["error"]
        return
    report = piconv.usage([str(_path(name))], by=["model"])
    got = {
        (TOOLS if row.key[0] == "(tools and summaries)" else row.key[0]): (
            row.input + row.output + row.cache_read + row.cache_write,
            row.cost,
        )
        for row in report.rows
    }
    got = {k: v for k, v in got.items() if v[0] > 0 or v[1] > 0}  # pi leaves out the empty ones
    assert set(got) == {w["key"] for w in want}
    for w in want:
        assert got[w["key"]][0] == w["tokens"]
        assert _same_cost(got[w["key"]][1], w["cost"])


def test_a_directory_lists_each_session_with_pi_s_figures(
    pi_usage: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    """Every corpus session copied into one project folder (the fork without its parent's
    name: a session of its own), listed: each row is pi's ``/session`` figure of its file."""
    project = tmp_path / "--corpus--"
    project.mkdir()
    for _corpus, path in oracle.corpus_files():
        if path.name != "branching-fork.jsonl":
            shutil.copy(path, project / path.name)
    listed = {Path(s.path).name: s for s in piconv.sessions(tmp_path)}
    assert len(listed) == len(oracle.corpus_files()) - 1
    compared = 0
    for name, session in listed.items():
        stats = pi_usage[name]["sessionStats"]
        header = pi_usage[name]["exportHeader"]
        if "error" not in header:
            assert session.turns == header["userMessages"]
        if "error" not in stats:
            compared += 1
            assert session.turns == stats["userMessages"]
            assert (session.input, session.output, session.cache_read, session.cache_write) == (
                stats["tokens"]["input"],
                stats["tokens"]["output"],
                stats["tokens"]["cacheRead"],
                stats["tokens"]["cacheWrite"],
            )
            assert session.tokens == stats["tokens"]["total"]
            assert _same_cost(session.cost, stats["cost"])
        breakdown = pi_usage[name]["breakdown"]
        if isinstance(breakdown, list):
            assert session.input + session.output + session.cache_read + session.cache_write == sum(
                b["tokens"] for b in breakdown
            )
    assert compared >= 10


def test_the_fork_pair_counts_each_entry_once(pi_usage: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    """pi counts the fork's copies in both files; piconv counts them under the parent."""
    parent, fork = _path("branching.jsonl"), _path("branching-fork.jsonl")
    project = tmp_path / "--p--"
    project.mkdir()
    shutil.copy(parent, project / parent.name)
    shutil.copy(fork, project / fork.name)
    listed = {Path(s.path).name: s for s in piconv.sessions(tmp_path)}
    both = (
        pi_usage[parent.name]["sessionStats"]["tokens"]["total"]
        + pi_usage[fork.name]["sessionStats"]["tokens"]["total"]
    )
    distinct = listed[parent.name].tokens + listed[fork.name].tokens
    assert listed[fork.name].relation == "fork" and listed[fork.name].parent == "--p--/branching.jsonl"
    assert listed[fork.name].copied > 0
    assert distinct < both
    # what the fork added of its own is what pi's fork file holds beyond the copies
    copies = [
        s
        for s in scan_document(piconv.load(fork)).spends
        if s.timestamp and s.timestamp < listed[fork.name].created
    ]
    assert distinct == both - sum(s.tokens for s in copies)
    report = piconv.usage(tmp_path, by=["day"])
    assert report.total.tokens == distinct
    by_model: dict[str, int] = defaultdict(int)
    for row in piconv.usage(tmp_path, by=["model", "session"]).rows:
        by_model[row.key[0]] += row.tokens
    assert sum(by_model.values()) == distinct
