"""Whether a conversion should take a second process.

A converter that can split its work (the ASF writer, the Markdown checker) asks
:func:`second_process_helps` when ``options["jobs"]`` is ``None``, the command line's
default for one session; 1 keeps one process and 2 or more allows a second.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import time


def fork_available() -> bool:
    """``fork`` is there and safe to use: Linux (macOS has it, but forking a process that
    has used its system frameworks can crash the child)."""
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def second_process_helps() -> bool:
    """A second process can only help: ``fork`` exists, two CPUs are this process's, no
    other thread runs (forking a threaded process can deadlock the child) and this is not
    itself a worker of a process pool (whose siblings already use the CPUs)."""
    if not fork_available():
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return cpus >= 2 and threading.active_count() == 1 and multiprocessing.parent_process() is None


def wants_second_process(jobs: int | None) -> bool:
    """What ``options["jobs"]`` asks: 1 (or less) no, 2 or more yes, ``None`` whether
    :func:`second_process_helps`."""
    if jobs is None:
        return second_process_helps()
    return jobs >= 2


SPARE_CPU = 0.5
"""The idle CPU time (in CPUs, on average) a :class:`CpuMeter` must have seen for a second
process to be worth starting: less means other work holds the other CPUs, and a second
process would only take turns with this one (and pay for its start and for the pages
it copies)."""


def _idle_seconds() -> float | None:
    """Idle (and I/O wait) CPU seconds of the whole machine since boot, summed over its
    CPUs; ``None`` where ``/proc/stat`` cannot be read."""
    try:
        with open("/proc/stat", "rb") as handle:
            fields = handle.readline().split()
        return (int(fields[4]) + int(fields[5])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class CpuMeter:
    """Whether the machine had a CPU to spare between the meter's start and now: a
    command-line conversion asks it before taking a second process by default, after
    some work of its own (so that the window covers a few hundred milliseconds)."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.idle = _idle_seconds()

    def spare(self) -> float | None:
        """CPUs idle on average since the start; ``None`` when unknown or too soon (the
        kernel counts in ticks of 10 ms)."""
        idle = _idle_seconds()
        elapsed = time.monotonic() - self.start
        if idle is None or self.idle is None or elapsed < 0.05:
            return None
        return (idle - self.idle) / elapsed

    def idle_enough(self) -> bool:
        """At least :data:`SPARE_CPU` to spare, or no way to tell."""
        spare = self.spare()
        return spare is None or spare >= SPARE_CPU
