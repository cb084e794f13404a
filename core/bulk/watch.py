"""``piconv watch``: a directory run (or one session's conversion) kept current while pi
writes.

The operating system says when a file changes (inotify, FSEvents, ReadDirectoryChangesW,
through `watchfiles <https://watchfiles.helpmanual.io>`_; a poller only where there are
no such events). Each batch of changes starts a directory run like any other
(:func:`.runner.run_bulk`): it converts what changed, since the manifest says what is up
to date, and rewrites the index and the archive; nothing else is touched. New sessions
and new project folders are found by that run's discovery.

pi appends one line per entry. A session whose last line is not yet whole (no newline at
its end) is held back until it is, or until it has stayed so for a quiet period
(:data:`QUIET_SECONDS`): then it is converted as it is, as a plain run would. The sessions
that change while watched are written with the format option ``watched`` (the HTML page
then says it is kept current and reloads itself); when the watch ends (``stop`` set,
Ctrl-C), one plain run writes them again without it, so the output directory is what a
plain run leaves, and the next plain run converts nothing.

The library neither prints nor installs signal handlers: ``on_run`` hears of each run,
``stop`` ends the watch (the command line sets it on Ctrl-C).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from ..errors import InputError, UsageError
from .discover import SUFFIX, layout_of
from .follow import QUIET_SECONDS, Held, WatchRun, events
from .select import Selection
from .summary import Summary


def watch(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    formats: Sequence[str],
    *,
    stop: threading.Event | None = None,
    on_run: Callable[[WatchRun], None] | None = None,
    quiet_seconds: float = QUIET_SECONDS,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    jobs: int | None = None,
    timeout: float | None = None,
    validate: bool = True,
    recover_glued: bool = False,
    filters: Sequence[tuple[str, Mapping[str, Any]]] = (),
    selection: Selection | None = None,
    recursive: bool = False,
    overwrite: bool = False,
    force_polling: bool | None = None,
) -> WatchRun:
    """Keep ``output`` current with ``source`` until ``stop`` is set (or Ctrl-C raises
    :class:`KeyboardInterrupt`, after the plain run that ends the watch), and return that
    last run (see the module, and docs/watch.md).

    ``source`` a directory: ``output`` is a directory run's OUTDIR, in ``formats``, with
    the directory run's ``options`` (by format), ``jobs``, ``timeout``, ``validate``,
    ``recover_glued``, ``filters``, ``selection``, ``recursive`` and ``overwrite``
    (:func:`piconv.bulk.run_bulk`). ``source`` a session file: ``output`` is the file
    its one format is written to (``options`` by format name too; ``leaf`` among them).
    ``on_run`` is called after each run, the first (which converts what is not up to
    date) and the last included. ``quiet_seconds``: how long an incomplete last line is
    waited for. ``force_polling``: poll the files instead of the OS's events (watchfiles'
    choice when None: events, but polling on WSL or with ``WATCHFILES_FORCE_POLLING``)."""
    src, out = os.fspath(source), os.fspath(output)
    stop = stop if stop is not None else threading.Event()
    if not os.path.exists(src):
        raise InputError("no such file or directory", path=src)
    report = on_run or (lambda run: None)
    if os.path.isdir(src):
        from .runner import run_bulk
        from .timelimit import DEFAULT_SECONDS

        def run(hold: Collection[str] = (), watched: Collection[str] = ()) -> Summary:
            return run_bulk(
                src,
                out,
                formats,
                options=options,
                jobs=jobs,
                timeout=DEFAULT_SECONDS if timeout is None else timeout,
                validate=validate,
                recover_glued=recover_glued,
                quiet=True,
                filters=filters,
                selection=selection,
                recursive=recursive,
                overwrite=overwrite,
                hold=hold,
                watched=watched,
            )

        return _watch_directory(src, out, run, stop, report, quiet_seconds, recursive, force_polling)
    if len(formats) != 1:
        raise UsageError("one session is kept current in one format: give one --to")
    from .follow import SessionWatch

    one = SessionWatch(
        src, out, formats[0], (options or {}).get(formats[0], {}), validate, recover_glued, filters
    )
    return one.watch(stop, report, quiet_seconds, force_polling)


def _watch_directory(
    src: str,
    out: str,
    run: Callable[..., Summary],
    stop: threading.Event,
    report: Callable[[WatchRun], None],
    quiet: float,
    recursive: bool,
    force_polling: bool | None,
) -> WatchRun:
    real_in, real_out = os.path.realpath(src), os.path.realpath(out)
    if real_in == real_out:
        raise UsageError("the output directory must not be the input directory", path=out)
    held = Held(quiet)
    live: set[str] = set()  # the sessions written for watching
    inside = real_out + os.sep

    def rel_of(path: str) -> str | None:
        if path == real_out or path.startswith(inside):
            return None  # the run's own writes, when OUTDIR is inside the input
        rel = os.path.relpath(path, real_in).replace(os.sep, "/")
        if rel.startswith("../") or not rel.endswith(SUFFIX):
            return None
        return rel if recursive or layout_of(rel) else None

    def accept(change: Any, path: str) -> bool:
        if rel_of(path) is not None:
            return True
        # a new folder (a project's): the run that follows finds what it holds, even
        # what was written there before the folder itself was watched
        return not (path == real_out or path.startswith(inside)) and os.path.isdir(path)

    started = False
    try:
        for changes in events(real_in, accept, stop, True, force_polling):
            if not started:
                # the first run, once the files are watched: what changes from now on
                # is seen, what changed before is found by this run
                t0 = time.perf_counter()
                first = run()
                started = True
                report(WatchRun((), (), False, time.perf_counter() - t0, first))
                continue
            now = time.monotonic()
            changed = set()
            folders = False
            for _change, path in changes:
                rel = rel_of(path)
                if rel is None:
                    folders = True
                    continue
                changed.add(rel)
                held.note(rel, path, now)
            due = held.due(now)
            holding = held.names()
            if not (changed - holding or due or folders):
                continue  # nothing but lines still being written (or a quiet wake)
            live.update((changed | due) - holding)
            t0 = time.perf_counter()
            summary = run(hold=holding, watched=live)
            report(
                WatchRun(
                    tuple(sorted(changed | due)),
                    tuple(sorted(holding)),
                    False,
                    time.perf_counter() - t0,
                    summary,
                )
            )
    finally:
        if started:
            t0 = time.perf_counter()
            summary = run()
            last = WatchRun((), (), True, time.perf_counter() - t0, summary)
            report(last)
    if not started:  # stopped before the files were watched: one plain run
        t0 = time.perf_counter()
        summary = run()
        last = WatchRun((), (), True, time.perf_counter() - t0, summary)
        report(last)
    return last
