"""Rendering a page in two processes: the page-order second half in a forked child.

The page is a sequence of items (tree markup strings and entries, page.py). After the
parent has laid that sequence out and paired every tool call with its result (both in page
order, before the fork), an entry's HTML depends on one piece of page-order state only:
the highlighting budget (what is left of it when the entry is drawn). The child cannot
know what the parent's half leaves over, so it speculates: it renders with a budget of 0
and logs the length of every block a budget could have highlighted (``Highlighter.log``).
Once the parent has drawn its half it knows the budget ``R`` that is really left; a child
item whose every logged block is longer than ``R`` is drawn exactly as a single process
would draw it (nothing fits, so nothing is highlighted and ``R`` stays). From the first
item that does not pass, the parent draws the rest itself. The output is therefore
byte-identical to the single-process page whatever the split; on long sessions the budget
runs out in the first few hundred entries and every child item passes.

The child sends its half in frames (about a megabyte each, boundaries between items), so
a rejected item costs at most a frame of rework. It runs the body check on each frame
when the page is validated. Any failure of the child (fork refused, crash, short read)
falls back to the parent drawing the rest: slower, never different.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import struct
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .check import check_body
from .escape import to_utf8

FRAME_AT = 1 << 20
_LEN = struct.Struct("<Q")


def available() -> bool:
    """Whether a second process is possible and useful here: ``fork`` exists, two CPUs
    are ours, no other thread runs (forking a threaded process can deadlock the child) and
    this is not a worker of a multiprocessing pool (the pool already uses the CPUs).
    ``PICONV_HTML_PROCESSES=1`` turns it off."""
    if not hasattr(os, "fork") or os.environ.get("PICONV_HTML_PROCESSES", "").strip() == "1":
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    if cpus < 2 or threading.active_count() != 1:
        return False
    mp = sys.modules.get("multiprocessing")
    return not (mp is not None and mp.parent_process() is not None)


@dataclass
class Half:
    """What the child reports: its frames (first item, images refused before it, byte
    length, whether the body check found something), per item with logged blocks the
    shortest one, and its body bytes (read frame by frame by the parent)."""

    frames: list[tuple[int, int, int, bool]] = field(default_factory=list)
    marks: list[tuple[int, int]] = field(default_factory=list)
    images_refused: int = 0


class Child:
    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.stream = os.fdopen(fd, "rb")
        self.done = False
        self.usage: Any = None

    def header(self) -> Half | None:
        try:
            raw = self.stream.read(_LEN.size)
            if len(raw) != _LEN.size:
                return None
            (n,) = _LEN.unpack(raw)
            data = self.stream.read(n)
            if len(data) != n:
                return None
            half = pickle.loads(data)
            return half if isinstance(half, Half) else None
        except Exception:  # any trouble means: draw the half here
            return None

    def read(self, n: int) -> bytes | None:
        data = self.stream.read(n)
        return data if len(data) == n else None

    def close(self, finished: bool = False) -> None:
        """Reap the child; killed first unless it has ``finished`` sending (it exits
        right after)."""
        if self.done:
            return
        self.done = True
        with contextlib.suppress(OSError):
            self.stream.close()
        if not finished:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            _pid, _status, self.usage = os.wait4(self.pid, 0)


def start(
    items: Sequence[Any],
    lo: int,
    render: Callable[[Any, Any], str],
    ctx: Any,
    validate: bool,
) -> Child | None:
    """Fork a child drawing ``items[lo:]`` with ``render(ctx, item)``; ``None`` if the
    fork fails."""
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        return None
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.close(r)
            _child(items, lo, render, ctx, validate, w)
            code = 0
        except BaseException:  # the parent sees a short stream and falls back
            pass
        finally:
            os._exit(code)
    os.close(w)
    return Child(pid, r)


def _child(
    items: Sequence[Any], lo: int, render: Callable[[Any, Any], str], ctx: Any, validate: bool, fd: int
) -> None:
    log: list[int] = ctx.highlighter.log
    half = Half()
    chunks: list[bytes] = []
    buf: list[str] = []
    size = 0
    first = lo
    images_before = ctx.images_refused

    def frame(next_item: int) -> None:
        nonlocal size, first, images_before
        data = to_utf8("".join(buf))
        buf.clear()
        size = 0
        bad = bool(validate and check_body(data))
        half.frames.append((first, images_before, len(data), bad))
        chunks.append(data)
        first = next_item
        images_before = ctx.images_refused

    for i in range(lo, len(items)):
        item = items[i]
        html = item if isinstance(item, str) else render(ctx, item)
        if log:
            half.marks.append((i, min(log)))
            log.clear()
        buf.append(html)
        size += len(html)
        if size >= FRAME_AT:
            frame(i + 1)
    if buf:
        frame(len(items))
    half.images_refused = ctx.images_refused
    head = pickle.dumps(half, protocol=pickle.HIGHEST_PROTOCOL)
    with os.fdopen(fd, "wb") as out:
        out.write(_LEN.pack(len(head)))
        out.write(head)
        for c in chunks:
            out.write(c)


def accepted_until(half: Half, remaining: int, end: int) -> int:
    """The first item the parent must draw itself: the start of the first frame holding
    an item with a logged block of at most ``remaining`` characters (``end`` if none)."""
    cut = next((i for i, shortest in half.marks if shortest <= remaining), None)
    if cut is None:
        return end
    start = half.frames[0][0] if half.frames else end
    for first, _images, _n, _bad in half.frames:
        if first > cut:
            break
        start = first
    return start
