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
