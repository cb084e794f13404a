"""The Markdown body rendered and written a batch at a time: the same bytes as the body
rendered whole; the turn count announced before rendering is the one rendered; the whole
conversion, checked or not, runs in one process whatever ``jobs`` asks."""

from __future__ import annotations

import gc
import io
import multiprocessing.process
import os
import threading
from pathlib import Path
from typing import Any

import piconv
import pytest
from piconv import Report
from piconv.converters.markdown import write, writer
from piconv.converters.markdown.images import Images
from piconv.converters.markdown.render import Renderer
from piconv.converters.markdown.tree import branch_titles, segments

from .conftest import REPO, corpus_files, corpus_ids

HOSTILE = REPO / "tests" / "data" / "hostile" / "markdown-hostile.jsonl"
SOURCES = [*corpus_files(), HOSTILE]
IDS = [*corpus_ids(), "hostile"]


def convert(path: Path, **options: Any) -> bytes:
    out = io.BytesIO()
    opts = {"images": "omit", "all_branches": False, "leaf": None, "output_path": None, **options}
    write(piconv.load(path), out, opts, Report("markdown"))
    return out.getvalue()


def whole_body(path: Path, all_branches: bool) -> str:
    """The body as one list of blocks, each run rendered whole (what the writer did before
    it rendered in batches)."""
    doc = piconv.load(path)
    report = Report("markdown")
    renderer = Renderer(
        report, Images("omit", report, None, doc.session.id), 3 if all_branches else 2, doc.labels()
    )
    if not all_branches:
        return "\n".join(renderer.render(doc.path(None)))
    blocks: list[str] = []
    segs = segments(doc)
    titles = branch_titles(segs, doc.labels())
    for batch in writer._tree(doc, segs, [renderer.plan(s.entries) for s in segs], renderer, titles):
        blocks += batch
    return "\n".join(blocks)


@pytest.mark.shared
@pytest.mark.parametrize("all_branches", [False, True], ids=["path", "tree"])
@pytest.mark.parametrize("path", SOURCES, ids=IDS)
def test_batches_of_any_size_write_the_whole_body_bytes(
    path: Path, all_branches: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = convert(path, all_branches=all_branches)
    text = expected.decode("utf-8")
    title_end = text.index("\n", text.index("\n# ") + 1)  # the title, then a blank line
    # (lone surrogates cannot be encoded: the writer replaces them)
    body = writer._SURROGATE.sub("\ufffd", whole_body(path, all_branches))
    after_title = text[title_end + 2 :]
    assert after_title.endswith(body)
    contents = after_title[: len(after_title) - len(body)]  # the table of contents, if any turn
    assert contents == "" or (contents.startswith(writer.CONTENTS) and contents.endswith("\n\n"))
    # One entry per batch and a flush after every batch: the same bytes.
    monkeypatch.setattr(Renderer.batches, "__defaults__", (1,))
    monkeypatch.setattr(writer, "FLUSH_CHARS", 1)
    assert convert(path, all_branches=all_branches) == expected
    assert convert(path, all_branches=all_branches, validate=True) == expected


@pytest.mark.shared
@pytest.mark.parametrize("all_branches", [False, True], ids=["path", "tree"])
@pytest.mark.parametrize("path", SOURCES, ids=IDS)
def test_the_turns_counted_before_rendering_are_the_turns_rendered(path: Path, all_branches: bool) -> None:
    doc = piconv.load(path)
    report = Report("markdown")
    renderer = Renderer(report, Images("omit", report, None, doc.session.id), 2, doc.labels())
    runs = (
        [renderer.plan(s.entries) for s in segments(doc)] if all_branches else [renderer.plan(doc.path(None))]
    )
    announced = sum(run.turns for run in runs)
    for run in runs:
        for _ in renderer.batches(run):
            pass
    assert renderer.turns == announced


def test_a_wrong_turn_count_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = Renderer._pair
    monkeypatch.setattr(
        Renderer, "_pair", lambda self, entries: (*real(self, entries)[:2], [])
    )  # 0 turns announced
    with pytest.raises(RuntimeError, match="turn headings written"):
        convert(HOSTILE)


def test_the_body_is_written_while_it_is_rendered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first piece goes out before the last entry is rendered."""
    monkeypatch.setattr(writer, "FLUSH_CHARS", 1)
    events: list[str] = []
    real_event, real_write = Renderer._message, writer._write

    def message(self: Renderer, *args: Any) -> None:
        events.append("render")
        real_event(self, *args)

    def write_piece(*args: Any) -> None:
        events.append("write")
        real_write(*args)

    monkeypatch.setattr(Renderer, "_message", message)
    monkeypatch.setattr(writer, "_write", write_piece)
    monkeypatch.setattr(Renderer.batches, "__defaults__", (1,))
    convert(HOSTILE)
    assert events.index("write") < len(events) - 1 - events[::-1].index("render")


@pytest.mark.parametrize("jobs", [None, 1, 2, 8])
def test_one_process_whatever_jobs_asks(jobs: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = piconv.load(HOSTILE)
    opts = {"images": "omit", "all_branches": False, "leaf": None, "output_path": None, "validate": True}
    expected = io.BytesIO()
    write(doc, expected, opts, Report("markdown"))

    def refused(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the markdown converter started a process or changed the collector")

    monkeypatch.setattr(os, "fork", refused)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refused)
    monkeypatch.setattr(threading.Thread, "start", refused)
    monkeypatch.setattr(gc, "disable", refused)  # the interpreter's collector is left alone
    out = io.BytesIO()
    write(doc, out, {**opts, "jobs": jobs}, Report("markdown"))
    assert out.getvalue() == expected.getvalue()
