"""What ``piconv watch`` is made of: the OS's file events (through watchfiles), the sessions
held while their last line is being written, what each run reports (:class:`WatchRun`),
and one session's conversion kept current (:class:`SessionWatch`). The directory's watch
is :func:`piconv.bulk.watch.watch`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .summary import Summary

QUIET_SECONDS = 2.0
"""A last line still incomplete after this long without a change is converted as it is
(pi stopped mid-line: a crash, a full disk)."""
WAKE_MS = 500
"""How often the watch wakes with nothing happening, to convert a held session whose
quiet period is over and to see ``stop``: twice a second, well under 1 % of a core."""
STEP_MS = 50
"""A batch of changes is taken once the files have been still this long."""
DEBOUNCE_MS = 1000
"""…or after this long, however busy the files are."""


@dataclass(frozen=True, slots=True)
class WatchRun:
    """One run of the watch: ``changed`` (the inputs whose change started it, ``/``
    -separated paths below the watched directory, or the session's file), ``held`` (those
    whose last line is still being written), ``final`` (the plain run that ends the
    watch), ``summary`` (a directory's run) or ``error`` (a single session's conversion
    that failed; the watch goes on), and ``seconds``."""

    changed: tuple[str, ...]
    held: tuple[str, ...]
    final: bool
    seconds: float
    summary: Summary | None = None
    error: str | None = None


def last_line_complete(path: str) -> bool:
    """Whether the file ends with a newline (or is empty, or is gone): what pi writes is
    then whole."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size == 0:
                return True
            fh.seek(size - 1)
            return fh.read(1) == b"\n"
    except OSError:
        return True


class Held:
    """Sessions whose last line is incomplete, each with the time its quiet period ends."""

    def __init__(self, quiet: float) -> None:
        self.quiet = quiet
        self.until: dict[str, float] = {}

    def note(self, rel: str, path: str, now: float) -> None:
        if last_line_complete(path):
            self.until.pop(rel, None)
        else:
            self.until[rel] = now + self.quiet  # it changed: the quiet period starts again

    def due(self, now: float) -> set[str]:
        """The held sessions whose quiet period is over (no longer held)."""
        done = {rel for rel, t in self.until.items() if t <= now}
        for rel in done:
            del self.until[rel]
        return done

    def names(self) -> frozenset[str]:
        return frozenset(self.until)


def events(
    path: str,
    accept: Callable[[Any, str], bool],
    stop: threading.Event,
    recursive: bool,
    force_polling: bool | None,
) -> Iterator[set[tuple[Any, str]]]:
    """The batches of changes below ``path`` that ``accept`` keeps, an empty one each
    :data:`WAKE_MS` with nothing happening, until ``stop`` is set. The first batch comes
    once the files are watched (what changes from then on is seen). Where the system's
    events cannot be had (no inotify watch left, a file system without events), the files
    are polled instead."""
    import watchfiles

    def batches(polling: bool | None) -> Iterator[set[tuple[Any, str]]]:
        return watchfiles.watch(
            path,
            watch_filter=accept,
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=stop,
            rust_timeout=WAKE_MS,
            yield_on_timeout=True,
            recursive=recursive,
            force_polling=polling,
            ignore_permission_denied=True,
            raise_interrupt=True,
        )

    stream = batches(force_polling)
    try:
        first = next(stream, None)
    except (OSError, RuntimeError):
        if force_polling:
            raise
        stream = batches(True)  # the system refused its events: poll
        first = next(stream, None)
    if first is None:
        return
    yield first
    yield from stream


class SessionWatch:
    """One session file converted into one output file, kept current: written with the
    option ``watched`` while watched, plainly once more when the watch ends."""

    def __init__(
        self,
        source: str,
        output: str,
        fmt: str,
        options: Mapping[str, Any],
        validate: bool,
        recover_glued: bool,
        filters: Sequence[tuple[str, Mapping[str, Any]]],
    ) -> None:
        self.source = os.path.realpath(source)
        self.output = output
        self.fmt = fmt
        self.options = dict(options)
        self.validate = validate
        self.recover_glued = recover_glued
        self.filters = tuple(filters)

    def convert(self, watched: bool) -> str | None:
        """Write the output; the error that stopped it, or None."""
        from .. import api
        from ..errors import PiconvError

        options = {**self.options, "watched": True} if watched else dict(self.options)
        try:
            api.convert(
                self.source,
                self.fmt,
                self.output,
                options,
                validate=self.validate,
                recover_glued=self.recover_glued,
                filters=self.filters,
            )
        except PiconvError as exc:
            return str(exc)
        return None

    def watch(
        self,
        stop: threading.Event,
        report: Callable[[WatchRun], None],
        quiet: float,
        force_polling: bool | None,
    ) -> WatchRun:
        from ..errors import PiconvError

        name = os.path.basename(self.source)
        held = Held(quiet)
        converted = False

        def accept(change: Any, path: str) -> bool:
            return os.path.realpath(path) == self.source

        try:
            for changes in events(os.path.dirname(self.source), accept, stop, False, force_polling):
                now = time.monotonic()
                if not converted:
                    # the first conversion, once the file is watched: it says whether the
                    # session can be converted at all
                    t0 = time.perf_counter()
                    error = self.convert(watched=True)
                    if error is not None:
                        raise PiconvError(error)
                    converted = True
                    report(WatchRun((), (), False, time.perf_counter() - t0))
                    continue
                if changes:
                    if not os.path.exists(self.source):
                        continue  # removed: the output stays as it was last written
                    held.note(name, self.source, now)
                due = held.due(now)
                if not (changes or due) or held.names():
                    continue
                t0 = time.perf_counter()
                error = self.convert(watched=True)
                report(WatchRun((name,), (), False, time.perf_counter() - t0, error=error))
        finally:
            if converted:
                t0 = time.perf_counter()
                error = self.convert(watched=False) if os.path.exists(self.source) else None
                last = WatchRun((), (), True, time.perf_counter() - t0, error=error)
                report(last)
        if not converted:  # stopped before the file was watched: one plain conversion
            t0 = time.perf_counter()
            error = self.convert(watched=False)
            last = WatchRun((), (), True, time.perf_counter() - t0, error=error)
            report(last)
        return last
