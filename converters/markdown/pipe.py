"""The checker on a second core: a child process reads the output as it is written.

The checker costs about as much as rendering (docs/performance.md, section "Markdown"),
and the writer renders the body a batch of entries at a time, writing each piece as it
comes. When the conversion may use two processes and the output grows past
:data:`START_CHARS`, the pieces go through a pipe to a forked child that runs the same
:class:`~.checker.Stream` on them, while this process goes on rendering: the check
overlaps the rendering. ``options["jobs"]`` >= 2 allows it, 1 forbids it, and ``None``
(the command line's default for one session) lets :func:`worthwhile` decide; the library's
``piconv.convert`` passes 1 unless told otherwise, as does a directory conversion, whose
worker processes already use the CPUs. The verdict is the same by construction: the
child reads the same text in the same order with the same code. Smaller outputs,
platforms without ``fork`` and any failure of the child (it dies, the pipe breaks) fall
back to the in-process stream or to the whole check, never to no check.

``fork`` is safe here: the document is frozen out of the cyclic collector's sight (see
``piconv.load``), so the child does not touch, and so does not copy, the parent's pages;
it reads only what comes through the pipe and leaves by ``os._exit``.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import threading
from typing import Any

from piconv.processes import fork_available, second_process_helps

from .checker import SECTION_CHARS, Stream

START_CHARS = 4 << 20
"""Outputs shorter than this are checked in this process: a child costs ~10 ms to start
and saves nothing on a small output."""


def worthwhile() -> bool:
    """The default (``jobs`` not given): a child when it can only help
    (:func:`piconv.processes.second_process_helps`). Whether the output is large enough is
    decided as it grows."""
    return second_process_helps()


def _serve(conn: Any, parent_end: Any) -> None:
    """The child: feeds what arrives to a stream until an empty message, then sends
    ``(problems, incomplete)``."""
    parent_end.close()  # so that the pipe ends (EOFError) if the parent dies
    stream = Stream(section=SECTION_CHARS)
    try:
        while True:
            data = conn.recv_bytes()
            if not data:
                break
            stream.feed(data.decode("utf-8"))
        conn.send((stream.close(), stream.incomplete))
    except BaseException as exc:  # any failure is "no verdict": the parent checks itself
        with contextlib.suppress(Exception):
            conn.send(("failed", repr(exc)))
    finally:
        conn.close()
        os._exit(0)  # no atexit handlers, no flushing of the parent's inherited buffers


BACKLOG = 4
"""Pieces (about a megabyte each) the parent may get ahead of the child: rendering goes on
through a stretch that is slow to check, and the child then has text waiting through one
that is quick to check (and then rendering is the slower)."""


class _Sender:
    """Sends pieces to the child from a thread, so that the parent does not stop rendering
    each time the child is a piece behind. (The thread waits in the pipe's ``write``,
    without the GIL; the child is forked before it starts.)"""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.queue: queue.Queue[bytes | None] = queue.Queue(maxsize=BACKLOG)
        self.failed = False
        self.thread = threading.Thread(target=self._run, name="piconv-markdown-check", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            data = self.queue.get()
            if data is None:
                return
            if self.failed:
                continue  # the child is gone: what is left is only drained
            try:
                self.conn.send_bytes(data)
            except OSError:
                self.failed = True

    def put(self, data: bytes) -> None:
        if not self.failed:
            self.queue.put(data)

    def finish(self) -> bool:
        """Waits until every piece is sent; whether all of them were."""
        self.queue.put(None)
        self.thread.join()
        return not self.failed


class ParallelStream:
    """:class:`~.checker.Stream`'s interface (``feed``, ``close``, ``incomplete``) with
    the work done in a child process once the output is large enough."""

    def __init__(self, start_chars: int | None = None) -> None:
        self.start_chars = START_CHARS if start_chars is None else start_chars
        self.held: list[str] = []  # pieces before the decision
        self.held_chars = 0
        self.local: Stream | None = None
        self.process: Any = None
        self.conn: Any = None
        self.sender: _Sender | None = None
        self.incomplete = False
        self.used_child = False  # for tests and the report of the benchmark

    def feed(self, text: str, data: bytes | None = None) -> None:
        """``data``: ``text`` in UTF-8, when the caller has it (no second encoding)."""
        if self.sender is not None:
            self.sender.put(text.encode("utf-8") if data is None else data)
            return
        if self.local is not None:
            self.local.feed(text)
            return
        self.held.append(text)
        self.held_chars += len(text)
        if self.held_chars >= self.start_chars:
            held, self.held = self.held, []
            if self._start():
                assert self.sender is not None
                for piece in held:
                    self.sender.put(piece.encode("utf-8"))
            else:
                self._go_local(held)

    def _start(self) -> bool:
        if not fork_available():
            return False
        ctx = multiprocessing.get_context("fork")
        parent_end, child_end = ctx.Pipe(duplex=True)
        try:
            process = ctx.Process(target=_serve, args=(child_end, parent_end), daemon=True)
            process.start()
        except OSError:
            parent_end.close()
            return False
        finally:
            child_end.close()
        self.process, self.conn, self.used_child = process, parent_end, True
        self.sender = _Sender(parent_end)
        return True

    def _go_local(self, held: list[str]) -> None:
        self.local = Stream(section=SECTION_CHARS)
        for piece in held:
            self.local.feed(piece)

    def _stop(self) -> None:
        if self.sender is not None:
            if self.sender.thread.is_alive() and self.process is not None:
                self.process.kill()  # a sender waiting in the pipe gets EPIPE and ends
            self.sender.finish()
            self.sender = None
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self.process is not None:
            self.process.join(5)
            if self.process.is_alive():
                self.process.kill()
                self.process.join()
            self.process = None

    def abort(self) -> None:
        """Ends the child, if any, without a verdict (the writer failed part way)."""
        self._stop()

    def close(self) -> list[str]:
        if self.incomplete:
            return []
        if self.sender is None and self.local is None:
            self._go_local(self.held)
            self.held = []
        if self.local is not None:
            problems = self.local.close()
            self.incomplete = self.local.incomplete
            return problems
        assert self.sender is not None
        answer = None
        if self.sender.finish():
            self.sender = None
            try:
                self.conn.send_bytes(b"")
                answer = self.conn.recv()
            except (OSError, EOFError):
                pass
        self._stop()
        if not (type(answer) is tuple and len(answer) == 2 and type(answer[0]) is list):
            self.incomplete = True  # no verdict from the child: the whole check decides
            return []
        problems, self.incomplete = answer
        return problems
