"""The checker in a child process (``jobs`` >= 2) gives the in-process verdict, and any
failure of the child falls back to checking in this process, never to no check."""

from __future__ import annotations

import io
import multiprocessing
import os
from pathlib import Path
from typing import Any

import piconv
import pytest
from piconv import Report
from piconv.converters.markdown import checker, pipe, write

from .conftest import REPO, corpus_files
from .test_markdown_sections import _mutations

pytestmark = pytest.mark.skipif(not pipe.fork_available(), reason="the child process needs fork (Linux)")

SOURCES = [p for p in corpus_files() if p.stem in ("basic", "badlogic__pi-mono__session")] + [
    REPO / "tests" / "data" / "hostile" / "markdown-hostile.jsonl"
]


def convert(path: Path, **options: Any) -> bytes:
    out = io.BytesIO()
    opts = {"images": "omit", "all_branches": False, "leaf": None, "output_path": None, **options}
    write(piconv.load(path), out, opts, Report("markdown"))
    return out.getvalue()


def through_child(text: str, piece: int = 4096) -> tuple[list[str], pipe.ParallelStream]:
    stream = pipe.ParallelStream(start_chars=1)
    for i in range(0, len(text), piece):
        stream.feed(text[i : i + piece])
    problems = stream.close()
    return problems, stream


@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_the_child_gives_the_in_process_verdict(path: Path) -> None:
    text = convert(path).decode("utf-8")
    cases = {"as written": text, **{name: bad for name, (bad, _) in _mutations(text).items()}}
    for name, bad in cases.items():
        problems, stream = through_child(bad)
        assert stream.used_child, name
        expected = checker.Stream(section=checker.SECTION_CHARS)
        expected.feed(bad)
        assert problems == expected.close(), name
        assert stream.incomplete == expected.incomplete, name
    assert not multiprocessing.active_children()  # every child was joined


def test_small_outputs_stay_in_process() -> None:
    text = convert(SOURCES[0]).decode("utf-8")
    stream = pipe.ParallelStream(start_chars=len(text) + 1)
    stream.feed(text)
    assert stream.close() == [] and not stream.used_child


def _dies(conn: Any, parent_end: Any) -> None:
    os._exit(3)


def test_a_child_that_dies_leaves_the_verdict_to_the_whole_check(monkeypatch: pytest.MonkeyPatch) -> None:
    text = convert(SOURCES[0]).decode("utf-8")
    monkeypatch.setattr(pipe, "_serve", _dies)
    problems, stream = through_child(text)
    assert stream.used_child and stream.incomplete and problems == []  # "no verdict": the caller checks
    # The writer then runs the whole check: a broken output is still refused.
    monkeypatch.setattr(pipe, "START_CHARS", 1)
    real_check = checker.check
    calls = []

    def counting_check(data: bytes) -> list[str]:
        calls.append(len(data))
        return real_check(data)

    monkeypatch.setattr(checker, "check", counting_check)
    assert convert(SOURCES[0], jobs=2, validate=True) == convert(SOURCES[0], jobs=1, validate=True)
    assert calls  # the fallback ran


def test_the_writer_uses_the_child_when_it_may(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipe, "START_CHARS", 1)
    used = []
    real_close = pipe.ParallelStream.close

    def spy(self: pipe.ParallelStream) -> list[str]:
        result = real_close(self)
        used.append(self.used_child)
        return result

    monkeypatch.setattr(pipe.ParallelStream, "close", spy)
    for path in SOURCES:
        assert convert(path, jobs=2, validate=True) == convert(path, jobs=1, validate=True)
    assert used == [True] * len(SOURCES)
    assert not multiprocessing.active_children()
