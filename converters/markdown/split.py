"""The body rendered by two processes: this one renders a run's first part while a forked
child renders the rest into a temporary file, which is then appended to the output.

Rendering costs more than loading (docs/performance.md, section "Markdown"), and the
two parts of a run need little from each other: the pairing of tool results is made for
the whole run before the fork (:meth:`.render.Renderer.plan`), and the child takes up the
numbering where the first part leaves it (:meth:`.render.Renderer.skip`: turn numbers,
the turn of each entry id that later notes refer to, image numbers). The second part
starts at an entry that opens a turn, so each part is whole blocks and the output is the
same bytes as from one process. What the child reports is added to this process's
report in order, which leaves it as one process would have.

With validation each process checks its own part as it renders it (one
:class:`~.checker.Stream` ending at the cut, one resumed there), so the check needs no
third process; :func:`.checker.join` puts the two verdicts together, and whatever the
parts cannot settle (a problem, a count that does not meet) goes to the whole check of
the output, which words the problems. Any failure of the child (it dies, raises, sends
nothing) leaves the rest to this process, which renders it as if there had been no
child.

``fork`` is safe here for the reasons given in :mod:`.pipe`: the document is frozen out
of the cyclic collector's sight, no other thread runs (see :func:`wanted`), and the
child leaves by ``os._exit``.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from piconv import Report
from piconv.processes import fork_available

from .render import Renderer, Run, opens_turn
from .writer import emit, tell

if TYPE_CHECKING:
    from .checker import Part, Stream

MIN_ENTRIES = 4096
"""Runs with fewer entries are rendered in one process: the fork and the copy cost a few
milliseconds, and below this there is little to share."""
SHARE = 0.4
"""The part of a run's entries this process renders (the child's part starts at the
first turn from here) when the output is not validated: this process also makes the head
(its statistics walk every entry, 0.15-0.2 s on a 100 MB session, against 0.6-0.7 s for
half the rendering) and appends the child's part, so it takes less than half."""
SHARE_VALIDATED = 0.45
"""The same with validation: each process also checks its part, which doubles the work
the head's cost is set against."""


def cut(run: Run, share: float | None = None) -> int | None:
    """Where the child's part starts: the first entry at or after ``share`` (default
    :data:`SHARE`) of the run that opens a turn; ``None`` when there is none after the
    first entry."""
    entries, paired = run.entries, run.paired
    i = max(1, int(len(entries) * (SHARE if share is None else share)))
    while i < len(entries) and not opens_turn(entries[i], paired):
        i += 1
    return i if i < len(entries) else None


def wanted(run: Run, two_processes: bool, validate: bool) -> int | None:
    """The cut, when the run is worth splitting and a second process may be used."""
    if not two_processes or len(run.entries) < MIN_ENTRIES or not fork_available():
        return None
    return cut(run, SHARE_VALIDATED if validate else SHARE)


@dataclass(frozen=True, slots=True)
class Answer:
    """What the child sends back: its losses and notes, the numbering it ended with, the
    turn count it started from, and its part's check (``None``: not validated, or the
    part alone cannot tell)."""

    losses: list[tuple[str, int, list[int], list[str]]]
    notes: dict[str, Any]
    turns: int
    images: int
    turns_at_cut: int
    part: Part | None


def _serve(conn: Any, renderer: Renderer, run: Run, start: int, validate: bool, sink_file: IO[bytes]) -> None:
    """The child: renders ``run.entries[start:]`` into ``sink_file`` (checking it when
    ``validate``) with ``renderer``, whose numbering is at ``start`` already, sends an
    :class:`Answer`, or a failure, and leaves."""
    try:
        report = Report(renderer.report.format)
        renderer.report = renderer.images.report = report
        turns_at_cut = renderer.turns
        stream = None
        if validate:
            from .checker import SECTION_CHARS, Stream

            stream = Stream.resume(renderer.level, turns_at_cut, SECTION_CHARS)
        first = True

        def feed(text: str, data: bytes) -> None:
            nonlocal first
            if first:
                text, first = text[1:], False  # the blank line before the cut is checked with the first part
            stream.feed(text)  # type: ignore[union-attr]

        emit(sink_file, report, "", renderer.batches(run, start=start), feed if stream is not None else None)
        sink_file.flush()
        part = None
        if stream is not None:
            stream.close()
            part = stream.part()
        losses = [(i.code, i.count, i.lines, i.examples) for i in report.losses.values()]
        conn.send(Answer(losses, report.notes, renderer.turns, renderer.images.count, turns_at_cut, part))
    except BaseException as exc:  # any failure is "no part": the parent renders it
        with contextlib.suppress(Exception):
            conn.send(("failed", repr(exc)))
    finally:
        conn.close()
        os._exit(0)  # no atexit handlers, no flushing of the parent's inherited buffers


class _Child:
    """The forked child and the pipe its answer comes through."""

    def __init__(self, renderer: Renderer, run: Run, start: int, validate: bool, sink_file: IO[bytes]) -> None:
        self.process: Any = None
        self.conn: Any = None
        ctx = multiprocessing.get_context("fork")
        receive, send = ctx.Pipe(duplex=False)
        try:
            process = ctx.Process(target=_serve, args=(send, renderer, run, start, validate, sink_file), daemon=True)
            process.start()
        except OSError:
            receive.close()
            return
        finally:
            send.close()
        self.process, self.conn = process, receive

    def answer(self) -> Answer | None:
        """Waits for the child's answer; ``None`` if it failed or never started."""
        if self.conn is None:
            return None
        try:
            answer = self.conn.recv()
        except (OSError, EOFError):
            answer = None
        self.stop()
        return answer if type(answer) is Answer else None

    def stop(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self.process is not None:
            if self.process.is_alive():
                self.process.kill()  # this process failed part way: the child's work is moot
            self.process.join()
            self.process = None


def write(
    out: IO[bytes], report: Report, head: Callable[[], str], renderer: Renderer, run: Run, start: int, validate: bool
) -> list[str]:
    """Writes ``head()`` and the run's blocks to ``out``, the entries from ``start`` on
    rendered by a child (``head`` is called once the child has started); the check's
    problems when ``validate`` (else ``[]``)."""
    base = tell(out)
    kept: list[str] | None = None if base is not None or not validate else []
    stream: Stream | None = None
    if validate:
        from .checker import SECTION_CHARS, Stream  # lazy: markdown-it-py loads only to validate

        stream = Stream(section=SECTION_CHARS)

    def feed(text: str, data: bytes) -> None:
        stream.feed(text)  # type: ignore[union-attr]
        if kept is not None:
            kept.append(text)

    sink = feed if stream is not None else None
    # The numbering at the cut, worked out before the fork: passing over the first part
    # in the child would touch (and so copy, page by page) memory only this process needs.
    later = renderer.copy()
    later.skip(run, start)
    with contextlib.ExitStack() as stack:
        try:
            rest: IO[bytes] | None = stack.enter_context(tempfile.TemporaryFile())
        except OSError:
            rest = None
        child = _Child(later, run, start, validate, rest) if rest is not None else None
        try:
            emit(out, report, head(), renderer.batches(run, stop=start), sink)
            answer = child.answer() if child is not None else None
        finally:
            if child is not None:
                child.stop()
        if answer is None:
            # No child, or it failed: the rest is rendered here, as in one process.
            emit(out, report, "", renderer.batches(run, start=start), sink)
            if stream is None:
                return []
            problems = stream.close()
            return _whole(out, base, kept, None) if stream.incomplete else problems
        assert rest is not None
        renderer.turns, renderer.images.count = answer.turns, answer.images
        report.merge(answer.losses, answer.notes)
        rest.seek(0)
        shutil.copyfileobj(rest, out, 1 << 20)
        if stream is None:
            return []
        stream.ends_at_cut = True
        stream.feed("\n")  # the blank line before the child's first heading
        stream.close()
        from .checker import join

        verdict = join(stream.part(), answer.part, answer.turns_at_cut)
        return verdict if verdict is not None else _whole(out, base, kept, rest)


def _whole(out: IO[bytes], base: int | None, kept: list[str] | None, rest: IO[bytes] | None) -> list[str]:
    """The whole check of what was written: read back from ``base``, or joined from the
    text ``kept`` and the child's part in ``rest``."""
    if kept is None:
        assert base is not None
        out.flush()
        out.seek(base)
        data = out.read()
        out.seek(0, os.SEEK_END)
    else:
        data = "".join(kept).encode("utf-8")
        if rest is not None:
            rest.seek(0)
            data += rest.read()
    from .checker import check

    return check(data)
