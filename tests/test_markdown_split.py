"""The body rendered by two processes (:mod:`piconv.converters.markdown.split`) is the body
one process renders, byte for byte, with the same report and the same verdict; the
numbering the child takes up (:meth:`Renderer.skip`) is the numbering rendering leaves;
a check in two parts passes only what the whole check passes."""

from __future__ import annotations

import io
import multiprocessing
import os
import random
from pathlib import Path
from typing import Any

import orjson
import piconv
import pytest
from piconv import Report
from piconv.converters.markdown import checker, split, write, writer
from piconv.converters.markdown.images import Images
from piconv.converters.markdown.render import Renderer, opens_turn

from .conftest import REPO, corpus_files, session_bytes
from .test_markdown_sections import _mutations

needs_fork = pytest.mark.skipif(not split.fork_available(), reason="the second process needs fork (Linux)")

POOL_SOURCES = corpus_files() + sorted((REPO / "tests" / "data" / "hostile").glob("*.jsonl"))


def _pool() -> list[list[dict[str, Any]]]:
    """The entry lines of each corpus and hostile file (images in user messages, tool
    results, extension messages and context edits among them)."""
    pool = []
    for path in POOL_SOURCES:
        entries = []
        for line in path.read_bytes().splitlines():
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if type(value) is dict and value.get("type") not in (None, "session"):
                entries.append(value)
        if entries:
            pool.append(entries)
    return pool


POOL = _pool()
WITH_IMAGES = [e for entries in POOL for e in entries if b'"image"' in orjson.dumps(e)]


def generated(seed: int, n: int = 400) -> bytes:
    """A linear session of about ``n`` entries: runs of up to 8 consecutive entries of a
    pool file (calls with their results), and entries with images, in a random order.
    Tool calls and results pair across any cut (call ids are kept, and repeat); labels,
    context edits and summaries refer to random earlier, later or missing entries."""
    rng = random.Random(seed)
    lines: list[dict[str, Any]] = []
    while len(lines) < n:
        if rng.random() < 0.15:
            picked = [rng.choice(WITH_IMAGES)]
            content = (picked[0].get("message") or {}).get("content")
            if type(content) is list and rng.random() < 0.3:  # the images as a context edit's replacement
                picked = [{"type": "context_edit", "targetId": "", "replacement": {"content": content}}]
        else:
            entries = rng.choice(POOL)
            at = rng.randrange(len(entries))
            picked = entries[at : at + rng.randint(1, 8)]
        for original in picked:
            entry = dict(original)
            i = len(lines)
            entry["id"] = f"e{i}"
            entry["parentId"] = f"e{i - 1}" if i else None
            for key in ("targetId", "fromId"):
                if key in entry:
                    entry[key] = f"e{rng.randrange(n + 5)}"
            lines.append(entry)
    return session_bytes(*lines)


def convert(source: Path | bytes, *, validate: bool = False, jobs: int = 1) -> tuple[bytes, dict[str, Any]]:
    doc = piconv.load(source)
    out = io.BytesIO()
    report = Report("markdown")
    opts = {"images": "omit", "all_branches": False, "leaf": None, "output_path": None, "validate": validate, "jobs": jobs}
    write(doc, out, opts, report)
    return out.getvalue(), report.to_json()


SEEDS = range(4)


def _cuts(run: Any) -> list[int]:
    starts = [i for i in range(1, len(run.entries)) if opens_turn(run.entries[i], run.paired)]
    return starts[:: max(1, len(starts) // 6)]


# -- the numbering the child takes up -----------------------------------------------------


def _renderer(doc: Any) -> Renderer:
    report = Report("markdown")
    return Renderer(report, Images("omit", report, None, doc.session.id), 2, doc.labels())


@pytest.mark.parametrize("seed", SEEDS)
def test_skip_leaves_the_numbering_rendering_leaves(seed: int) -> None:
    doc = piconv.load(generated(seed))
    run = _renderer(doc).plan(doc.path())
    for stop in range(0, len(run.entries) + 1, 7):
        rendered = _renderer(doc)
        for _ in rendered.batches(run, stop=stop):
            pass
        skipped = _renderer(doc)
        skipped.skip(run, stop)
        assert (skipped.turns, skipped.turn_of, skipped.images.count) == (
            rendered.turns,
            rendered.turn_of,
            rendered.images.count,
        ), stop
        assert not skipped.report.losses  # passing over reports nothing


def test_the_generated_sessions_hold_what_skip_counts() -> None:
    """The generator feeds the test above images, paired results and references."""
    text, _ = convert(generated(0))
    assert text.count(b"Image ") > 10 and text.count(b"**Tool call**") > 10 and b"set on turn " in text


# -- the output and the report ------------------------------------------------------------


@needs_fork
@pytest.mark.parametrize("validate", [False, True], ids=["unvalidated", "validated"])
@pytest.mark.parametrize("seed", SEEDS)
def test_two_processes_write_the_bytes_and_report_of_one(seed: int, validate: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    source = generated(seed)
    expected = convert(source, validate=validate)
    monkeypatch.setattr(split, "MIN_ENTRIES", 1)
    monkeypatch.setattr(writer, "FLUSH_CHARS", 1 << 12)  # several pieces in each part
    used = _spy_children(monkeypatch)
    wholes = _spy_whole_checks(monkeypatch)
    for share in (0.0, 0.13, 0.5, 0.9):
        monkeypatch.setattr(split, "SHARE_VALIDATED" if validate else "SHARE", share)
        assert convert(source, validate=validate, jobs=2) == expected, share
    assert used and all(used)
    assert wholes == []  # each part's check settled the valid output
    assert not multiprocessing.active_children()


@needs_fork
@pytest.mark.parametrize("path", POOL_SOURCES, ids=[f"{p.parent.name}/{p.stem}" for p in POOL_SOURCES])
def test_two_processes_on_every_corpus_file(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        expected = convert(path, validate=True)
    except piconv.ValidationFailed:
        pytest.skip("not valid output in one process either")
    monkeypatch.setattr(split, "MIN_ENTRIES", 1)
    assert convert(path, validate=True, jobs=2) == expected
    assert convert(path, jobs=2) == convert(path)


def _spy_children(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each child answered (a list the conversions append to)."""
    used: list[bool] = []
    real = split._Child.answer

    def answer(self: Any) -> Any:
        got = real(self)
        used.append(got is not None)
        return got

    monkeypatch.setattr(split._Child, "answer", answer)
    return used


def _spy_whole_checks(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The outputs the writer with a child checks whole (a list it appends to)."""
    checked: list[bytes] = []
    real = checker.check

    def check(data: bytes) -> list[str]:
        checked.append(data)
        return real(data)

    monkeypatch.setattr(checker, "check", check)
    return checked


@needs_fork
def test_a_failing_child_leaves_the_rest_to_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    source = generated(7)
    expected = convert(source, validate=True)
    monkeypatch.setattr(split, "MIN_ENTRIES", 1)

    parent = os.getpid()
    real = Renderer.batches

    def fails_in_the_child(self: Renderer, run: Any, *args: Any, **kwargs: Any) -> Any:
        if os.getpid() != parent:
            raise RuntimeError("in the child")
        return real(self, run, *args, **kwargs)

    monkeypatch.setattr(Renderer, "batches", fails_in_the_child)
    used = _spy_children(monkeypatch)
    assert convert(source, validate=True, jobs=2) == expected
    assert convert(source, jobs=2)[0] == expected[0]
    assert used == [False, False]
    assert not multiprocessing.active_children()


@needs_fork
def test_no_room_for_the_child_s_part_leaves_it_to_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    source = generated(8)
    expected = convert(source, validate=True)
    monkeypatch.setattr(split, "MIN_ENTRIES", 1)

    def no_room(*args: Any, **kwargs: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(split.tempfile, "TemporaryFile", no_room)
    used = _spy_children(monkeypatch)
    assert convert(source, validate=True, jobs=2) == expected
    assert used == []  # no child was started
    assert not multiprocessing.active_children()


@needs_fork
def test_a_failure_while_rendering_the_first_part_leaves_no_child(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(split, "MIN_ENTRIES", 1)
    real = Renderer.batches

    def fails(self: Renderer, run: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("stop") is not None:
            raise KeyError("first part")
        return real(self, run, *args, **kwargs)

    monkeypatch.setattr(Renderer, "batches", fails)
    with pytest.raises(KeyError):
        convert(generated(3), validate=True, jobs=2)
    assert not multiprocessing.active_children()


def test_one_process_unless_allowed_and_large() -> None:
    doc = piconv.load(generated(1))
    run = _renderer(doc).plan(doc.path())
    assert split.wanted(run, False, False) is None
    assert split.wanted(run, True, True) is None  # fewer entries than MIN_ENTRIES
    start = split.cut(run)
    assert start is not None and opens_turn(run.entries[start], run.paired)
    assert not any(opens_turn(e, run.paired) for e in run.entries[int(len(run.entries) * split.SHARE) : start])
    assert split.cut(run, 0.5) >= len(run.entries) // 2


def test_merged_reports_are_the_report_of_one_sequence() -> None:
    rng = random.Random(5)
    adds = [
        (rng.choice("abc"), None if rng.random() < 0.1 else rng.randrange(5000), rng.choice([None, *"uvwxyz"]))
        for _ in range(5000)
    ]
    for cut in (0, 1, 900, 2500, 4999, 5000):
        whole, first, second = Report("markdown"), Report("markdown"), Report("markdown")
        for code, line, detail in adds:
            whole.add(code, line, detail)
        for code, line, detail in adds[:cut]:
            first.add(code, line, detail)
        for code, line, detail in adds[cut:]:
            second.add(code, line, detail, count=1)
        second.notes["k"] = "v"
        first.merge([(i.code, i.count, i.lines, i.examples) for i in second.losses.values()], second.notes)
        whole.notes["k"] = "v"
        assert first.to_json() == whole.to_json(), cut


# -- the check in two parts -----------------------------------------------------------------


def _two_part_verdict(text: str, at: int, turns_before: int) -> list[str] | None:
    """``text`` checked as the writer does with a child: up to the blank line before the
    heading at ``at``, and from it."""
    first = checker.Stream(section=checker.SECTION_CHARS)
    first.feed(text[:at])
    first.ends_at_cut = True
    first.close()
    second = checker.Stream.resume(2, turns_before, checker.SECTION_CHARS)
    second.feed(text[at:])
    second.close()
    return checker.join(first.part(), second.part(), turns_before)


def _headings(text: str) -> list[tuple[int, int]]:
    """Where each top-level turn heading after a blank line starts, and how many turn
    headings come before it (from markdown-it's parse of the whole text)."""
    from markdown_it import MarkdownIt

    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    found = []
    count = 0
    for tok in MarkdownIt("commonmark").parse(text):
        if tok.type == "heading_open" and tok.level == 0 and tok.tag == "h2" and tok.map:
            at = starts[tok.map[0]]
            if text[at - 2 : at] == "\n\n":
                found.append((at, count))
            count += 1
    return found


@pytest.mark.parametrize("seed", SEEDS)
def test_a_check_in_two_parts_passes_only_what_the_whole_check_passes(seed: int) -> None:
    text = convert(generated(seed, 150))[0].decode("utf-8")
    cases = {"as written": text, **{name: bad for name, (bad, _) in _mutations(text).items()}}
    settled = 0
    for name, case in cases.items():
        whole = checker.check(case.encode("utf-8"))
        heads = _headings(case)
        for n, (at, turns_before) in enumerate(heads[:: max(1, len(heads) // 8)]):
            verdict = _two_part_verdict(case, at, turns_before)
            if verdict is not None:
                assert verdict == whole == [], (name, n)
                settled += 1
            elif name == "as written":
                pytest.fail(f"a clean output not settled in two parts (cut {n})")
            # one count off: the parts do not meet, whatever they find
            assert _two_part_verdict(case, at, turns_before + 1) is None
    assert settled


def test_a_resumed_check_must_open_with_a_heading() -> None:
    stream = checker.Stream.resume(2, 3, checker.SECTION_CHARS)
    stream.feed("Text, not a heading.\n")
    stream.close()
    assert stream.part() is None


def _part(**changes: Any) -> checker.Part:
    fields: dict[str, Any] = {
        "turns": 5, "titles": 1, "depth": 0, "problems": [], "references": False, "fm": {"layout": "path", "turns": 9}
    }
    return checker.Part(**{**fields, **changes})


def test_two_parts_join_only_where_their_counts_meet() -> None:
    first, second = _part(), _part(turns=9, fm={"layout": "path"})
    assert checker.join(first, second, 5) == []
    assert checker.join(first, second, 4) is None  # the child started from another count
    assert checker.join(None, second, 5) is None and checker.join(first, None, 5) is None
    for bad_first in (
        _part(turns=6), _part(titles=0), _part(titles=2), _part(depth=1), _part(problems=["x"]),
        _part(references=True), _part(fm={"layout": "tree", "turns": 9}),
    ):
        assert checker.join(bad_first, second, 5) is None, bad_first
    for bad_second in (
        _part(turns=8, fm={"layout": "path"}), _part(turns=9, titles=2, fm={"layout": "path"}),
        _part(turns=9, depth=1, fm={"layout": "path"}), _part(turns=9, problems=["x"], fm={"layout": "path"}),
        _part(turns=9, references=True, fm={"layout": "path"}), _part(turns=9, fm={"layout": "tree"}),
    ):
        assert checker.join(first, bad_second, 5) is None, bad_second
