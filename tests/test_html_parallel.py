"""A page drawn in two processes (converters/html/parallel.py) is byte-identical to the
page drawn in one, whatever the split, the frame size and the highlighting budget."""

from __future__ import annotations

import importlib
import io
import os
from pathlib import Path

import piconv
import pytest
from conftest import SHARED
from piconv import ValidationFailed
from piconv.report import Report

page = importlib.import_module("piconv.converters.html.page")
parallel = importlib.import_module("piconv.converters.html.parallel")

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

HERE = Path(__file__).resolve().parent
REAL = SHARED / "corpus/pi/badlogic__pi-mono__before-compaction.jsonl"
HOSTILE = sorted((HERE / "data/hostile").glob("*.jsonl"))


def _page(doc: piconv.Document, options: dict) -> tuple[bytes, Report]:
    out = io.BytesIO()
    report = Report(format="html")
    page.write_page(doc, out, {"validate": True, **options}, report)
    return out.getvalue(), report


def _serial(monkeypatch: pytest.MonkeyPatch, doc: piconv.Document, options: dict) -> tuple[bytes, Report]:
    monkeypatch.setattr(page, "PARALLEL_MIN_ENTRIES", 10**9)
    return _page(doc, options)


def _split(
    monkeypatch: pytest.MonkeyPatch, doc: piconv.Document, options: dict, split: float, frame: int
) -> tuple[bytes, Report]:
    monkeypatch.setattr(page, "PARALLEL_MIN_ENTRIES", 1)
    monkeypatch.setattr(page, "SPLIT", split)
    monkeypatch.setattr(parallel, "FRAME_AT", frame)
    monkeypatch.setattr(parallel, "available", lambda: True)
    return _page(doc, options)


@pytest.mark.parametrize(
    "options",
    [{}, {"highlight_budget": "0"}, {"highlight_budget": "3000"}, {"highlight_budget": "100000000"}],
    ids=["default", "no-budget", "small-budget", "huge-budget"],
)
@pytest.mark.parametrize("split", [0.0, 0.1, 0.5, 0.9])
def test_two_processes_same_bytes(monkeypatch: pytest.MonkeyPatch, options: dict, split: float) -> None:
    if not REAL.is_file():
        pytest.skip("corpus not available")
    doc = piconv.load(REAL)
    want, want_report = _serial(monkeypatch, doc, options)
    for frame in (1, 4096, 1 << 20):
        got, report = _split(monkeypatch, doc, options, split, frame)
        assert got == want, (split, frame)
        assert report == want_report


@pytest.mark.parametrize("path", HOSTILE, ids=[p.name for p in HOSTILE])
def test_two_processes_hostile(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    doc = piconv.load(path)
    want, want_report = _serial(monkeypatch, doc, {})
    for split in (0.0, 0.3, 0.7):
        got, report = _split(monkeypatch, doc, {}, split, 512)
        assert got == want
        assert report == want_report


def test_child_failure_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = piconv.load(HOSTILE[0])
    want, _ = _serial(monkeypatch, doc, {})

    def broken(*_args: object) -> None:
        raise RuntimeError("child crashed")

    monkeypatch.setattr(parallel, "_child", broken)
    got, _ = _split(monkeypatch, doc, {}, 0.5, 512)
    assert got == want

    def no_fork() -> int:
        raise OSError("no fork here")

    monkeypatch.setattr(os, "fork", no_fork)
    got, _ = _split(monkeypatch, doc, {}, 0.5, 512)
    assert got == want


def test_validation_while_writing_catches_bad_markup(monkeypatch: pytest.MonkeyPatch) -> None:
    """A body piece outside the vocabulary fails the page, from either process."""
    doc = piconv.load(HOSTILE[0])
    render_entry = page.render_entry

    def evil(ctx, entry, pairs, label):  # type: ignore[no-untyped-def]
        return render_entry(ctx, entry, pairs, label) + '<img src="x" onerror="alert(1)">'

    monkeypatch.setattr(page, "render_entry", evil)
    with pytest.raises(ValidationFailed, match="vocabulary"):
        _serial(monkeypatch, doc, {})
    with pytest.raises(ValidationFailed, match="vocabulary"):
        _split(monkeypatch, doc, {}, 0.5, 512)
