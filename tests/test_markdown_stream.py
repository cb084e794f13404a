"""The Markdown body rendered and written a batch at a time: the same bytes as the body
rendered whole; the turn count announced before rendering is the one rendered; the checker
child checks while rendering goes on, catches what the in-process checker catches, and
its failure falls back to the whole check; the default uses the child only where it may."""

from __future__ import annotations

import io
import multiprocessing
import os
import threading
import time
from pathlib import Path
from typing import Any

import piconv
import pytest
from piconv import Report, ValidationFailed, processes
from piconv.cli import main
from piconv.converters.markdown import pipe, render, write, writer
from piconv.converters.markdown.images import Images
from piconv.converters.markdown.render import Renderer
from piconv.converters.markdown.tree import segments

from .conftest import REPO, corpus_files, corpus_ids

HOSTILE = REPO / "tests" / "data" / "hostile" / "markdown-hostile.jsonl"
SOURCES = [*corpus_files(), HOSTILE]
IDS = [*corpus_ids(), "hostile"]
needs_fork = pytest.mark.skipif(not pipe.fork_available(), reason="the child process needs fork (Linux)")


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
    renderer = Renderer(report, Images("omit", report, None, doc.session.id), 3 if all_branches else 2, doc.labels())
    if not all_branches:
        return "\n".join(renderer.render(doc.path(None)))
    blocks: list[str] = []
    for batch in writer._tree(doc, segs := segments(doc), [renderer.plan(s.entries) for s in segs], renderer):
        blocks += batch
    return "\n".join(blocks)


@pytest.mark.parametrize("all_branches", [False, True], ids=["path", "tree"])
@pytest.mark.parametrize("path", SOURCES, ids=IDS)
def test_batches_of_any_size_write_the_whole_body_bytes(
    path: Path, all_branches: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = convert(path, all_branches=all_branches)
    text = expected.decode("utf-8")
    title_end = text.index("\n", text.index("\n# ") + 1)  # the title, then a blank line
    # (lone surrogates cannot be encoded: the writer replaces them)
    assert text[title_end + 2 :] == writer._SURROGATE.sub("\ufffd", whole_body(path, all_branches))
    # One entry per batch and a flush after every batch: the same bytes.
    monkeypatch.setattr(Renderer.batches, "__defaults__", (1,))
    monkeypatch.setattr(writer, "FLUSH_CHARS", 1)
    assert convert(path, all_branches=all_branches) == expected
    assert convert(path, all_branches=all_branches, validate=True) == expected


@pytest.mark.parametrize("all_branches", [False, True], ids=["path", "tree"])
@pytest.mark.parametrize("path", SOURCES, ids=IDS)
def test_the_turns_counted_before_rendering_are_the_turns_rendered(path: Path, all_branches: bool) -> None:
    doc = piconv.load(path)
    report = Report("markdown")
    renderer = Renderer(report, Images("omit", report, None, doc.session.id), 2, doc.labels())
    runs = [renderer.plan(s.entries) for s in segments(doc)] if all_branches else [renderer.plan(doc.path(None))]
    announced = sum(run.turns for run in runs)
    for run in runs:
        for _ in renderer.batches(run):
            pass
    assert renderer.turns == announced


def test_a_wrong_turn_count_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = Renderer._pair
    monkeypatch.setattr(Renderer, "_pair", lambda self, entries: (*real(self, entries)[:2], 0))  # 0 turns announced
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


# -- the checker child ------------------------------------------------------------------


def _raw_html_note(text: str) -> str:
    return f"<div>{text}</div>\n"  # raw HTML: the checker refuses it


@needs_fork
@pytest.mark.parametrize("dies", [False, True], ids=["child", "child dies"])
def test_the_child_refuses_an_invalid_output(dies: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipe, "START_CHARS", 1)
    monkeypatch.setattr(writer, "FLUSH_CHARS", 1)
    monkeypatch.setattr(render, "_note", _raw_html_note)
    if dies:
        monkeypatch.setattr(pipe, "_serve", _dies_after_two)
    streams = _spy_streams(monkeypatch)
    with pytest.raises(ValidationFailed, match="raw HTML"):
        convert(HOSTILE, jobs=2, validate=True)
    assert [s.used_child for s in streams] == [True]
    assert streams[0].incomplete == dies  # a dead child left the verdict to the whole check
    assert not multiprocessing.active_children()


def _dies_after_two(conn: Any, parent_end: Any) -> None:
    """A child that reads two pieces and dies: the parent is part way through sending."""
    parent_end.close()
    conn.recv_bytes()
    conn.recv_bytes()
    os._exit(3)


@needs_fork
def test_a_child_that_dies_part_way_leaves_a_valid_output_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = convert(HOSTILE, validate=True)
    monkeypatch.setattr(pipe, "START_CHARS", 1)
    monkeypatch.setattr(writer, "FLUSH_CHARS", 1)
    monkeypatch.setattr(pipe, "_serve", _dies_after_two)
    streams = _spy_streams(monkeypatch)
    assert convert(HOSTILE, jobs=2, validate=True) == expected
    assert streams[0].used_child and streams[0].incomplete
    assert not multiprocessing.active_children()


@needs_fork
def test_a_failure_while_rendering_leaves_no_child(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipe, "START_CHARS", 1)
    monkeypatch.setattr(writer, "FLUSH_CHARS", 1)
    monkeypatch.setattr(Renderer.batches, "__defaults__", (1,))
    calls = 0
    real = Renderer._message

    def fails_late(self: Renderer, *args: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == 10:
            raise KeyError("late")
        real(self, *args)

    monkeypatch.setattr(Renderer, "_message", fails_late)
    streams = _spy_streams(monkeypatch)
    with pytest.raises(KeyError):
        convert(HOSTILE, jobs=2, validate=True)
    assert streams[0].used_child
    assert not multiprocessing.active_children()
    assert not any(t.name == "piconv-markdown-check" for t in threading.enumerate())


def _spy_streams(monkeypatch: pytest.MonkeyPatch) -> list[pipe.ParallelStream]:
    made: list[pipe.ParallelStream] = []
    real_init = pipe.ParallelStream.__init__

    def init(self: pipe.ParallelStream, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(pipe.ParallelStream, "__init__", init)
    return made


# -- the default ------------------------------------------------------------------------


def test_jobs_decide_and_none_asks_worthwhile(monkeypatch: pytest.MonkeyPatch) -> None:
    assert writer.use_child(2) and writer.use_child(8)
    assert not writer.use_child(1) and not writer.use_child(0)
    for answer in (True, False):
        monkeypatch.setattr(pipe, "worthwhile", lambda answer=answer: answer)
        assert writer.use_child(None) is answer


class _Meter(processes.CpuMeter):
    def __init__(self, spare: float | None) -> None:
        self.value = spare

    def spare(self) -> float | None:
        return self.value


def test_the_default_wants_a_cpu_to_spare(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipe, "worthwhile", lambda: True)
    assert writer.use_child(None, _Meter(1.0)) and writer.use_child(None, _Meter(processes.SPARE_CPU))
    assert writer.use_child(None, _Meter(None))  # no way to tell: as before
    assert not writer.use_child(None, _Meter(0.2))  # other work holds the other CPU
    assert writer.use_child(2, _Meter(0.0)) and not writer.use_child(1, _Meter(2.0))  # told: obeyed


def test_the_cpu_meter_counts_idle_time(monkeypatch: pytest.MonkeyPatch) -> None:
    idle = iter([100.0, 100.8])
    monkeypatch.setattr(processes, "_idle_seconds", lambda: next(idle))
    clock = iter(range(10, 100))  # a second between readings
    monkeypatch.setattr(processes.time, "monotonic", lambda: float(next(clock)))
    meter = processes.CpuMeter()
    assert meter.spare() == pytest.approx(0.8)
    monkeypatch.setattr(processes, "_idle_seconds", lambda: None)
    assert processes.CpuMeter().spare() is None and processes.CpuMeter().idle_enough()


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="Linux only")
def test_the_cpu_meter_reads_this_machine() -> None:
    meter = processes.CpuMeter()
    assert meter.spare() is None  # too soon to tell
    time.sleep(0.1)
    spare = meter.spare()
    assert spare is not None and 0 <= spare <= (os.cpu_count() or 1) + 0.5


@needs_fork
def test_worthwhile_wants_two_cpus_one_thread_and_no_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(multiprocessing, "parent_process", lambda: None)
    assert pipe.worthwhile()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert not pipe.worthwhile()  # one CPU: the child would only take turns with the parent
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert not pipe.worthwhile()  # another thread: forking could deadlock the child
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(multiprocessing, "parent_process", lambda: object())
    assert not pipe.worthwhile()  # a pool's worker: its siblings use the CPUs
    monkeypatch.setattr(processes, "fork_available", lambda: False)
    monkeypatch.setattr(multiprocessing, "parent_process", lambda: None)
    assert not pipe.worthwhile()


@needs_fork
@pytest.mark.parametrize(
    ("args", "child"), [([], True), (["--jobs", "1"], False), (["--jobs", "2"], True)], ids=["default", "1", "2"]
)
def test_the_command_line_uses_the_child_by_default(
    args: list[str], child: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pipe, "worthwhile", lambda: True)  # as on a 2-CPU Linux machine
    monkeypatch.setattr(processes.CpuMeter, "idle_enough", lambda self: True)  # ... with a CPU to spare
    monkeypatch.setattr(pipe, "START_CHARS", 1)
    streams = _spy_streams(monkeypatch)
    out = tmp_path / "out.md"
    assert main([str(HOSTILE), "--to", "markdown", "-o", str(out), "-q", "--images", "omit", *args]) == 0
    assert [s.used_child for s in streams] == ([True] if child else [])
    assert out.read_bytes() == convert(HOSTILE)


@needs_fork
def test_the_library_keeps_to_one_process_unless_told(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipe, "worthwhile", lambda: True)
    monkeypatch.setattr(processes.CpuMeter, "idle_enough", lambda self: True)
    monkeypatch.setattr(pipe, "START_CHARS", 1)
    streams = _spy_streams(monkeypatch)
    piconv.convert(HOSTILE, "markdown", tmp_path / "a.md", {"images": "omit"})
    assert streams == []
    piconv.convert(HOSTILE, "markdown", tmp_path / "b.md", {"images": "omit", "jobs": None})
    assert [s.used_child for s in streams] == [True]
    assert (tmp_path / "a.md").read_bytes() == (tmp_path / "b.md").read_bytes()
