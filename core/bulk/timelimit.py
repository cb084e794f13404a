"""A time limit for one session's task, so one pathological session cannot hold a worker
for ever.

Done with ``SIGALRM`` inside the process that runs the task (a pool worker, or this
process for ``--jobs 1``) rather than by killing the worker from outside: a pool cannot
kill one of its workers without breaking the pool and failing every task in flight, while
the alarm fails this task only and the worker goes on with the next. The limit applies
where a task runs in a process's main thread (the local executor); Dask runs tasks in
threads, where no signal can be delivered, so there it does not apply. A converter stuck
inside one call into a C library is stopped when that call returns.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from types import FrameType

DEFAULT_SECONDS = 900.0
"""Fifteen minutes: far beyond any real session (the largest convert in seconds), short
enough that a stuck worker is noticed within one run."""


class TimedOut(BaseException):
    """Raised in the task when its time is up. A BaseException, so a converter's own
    ``except Exception`` cannot swallow it and carry on."""


RETRY_SECONDS = 1.0
"""Once the limit is passed, the alarm comes again this often (or as often as the limit, if
shorter, but never more often than :data:`MIN_RETRY_SECONDS`) until the block is left: a
:class:`TimedOut` raised where Python only reports it (in a ``__del__``, or a generator
closed as it is collected) does not let the task run on."""

MIN_RETRY_SECONDS = 0.01
"""An alarm repeating every microsecond (``--timeout 0.000001``) would leave the process
no time but for its handler."""


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`TimedOut` in this block after ``seconds`` (None or 0: no limit)."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not seconds or not usable:
        yield
        return
    left = [False]  # set first thing on the way out: an alarm from then on raises nothing

    def expire(_signum: int, _frame: FrameType | None) -> None:
        if not left[0]:
            raise TimedOut

    # a timer the host program had running is put back when the block ends, what remained
    # of it counted down meanwhile (it is due at once if it fell due inside the block)
    host_delay, host_interval = signal.getitimer(signal.ITIMER_REAL)
    started = time.monotonic()
    previous = signal.signal(signal.SIGALRM, expire)
    try:
        # armed inside the ``try``: a limit shorter than this call can expire before it returns
        signal.setitimer(signal.ITIMER_REAL, seconds, max(min(seconds, RETRY_SECONDS), MIN_RETRY_SECONDS))
        yield
    finally:
        while True:
            try:
                left[0] = True
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
                if host_delay:
                    due = max(host_delay - (time.monotonic() - started), MIN_RETRY_SECONDS)
                    signal.setitimer(signal.ITIMER_REAL, due, host_interval)
                break
            except TimedOut:
                # the alarm came before ``left`` was set: had it escaped, the timer and the
                # handler would stay in place and fail whatever the process ran next
                continue
