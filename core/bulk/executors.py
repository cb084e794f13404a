"""Where the per-file tasks run: in this process, a local process pool, or a Dask cluster.

Every executor runs the same :func:`~piconv.bulk.worker.run_task` on the same
:class:`~piconv.bulk.worker.Task` values and yields its result dicts as they complete, so
the outputs do not depend on the executor. Tasks are submitted largest input first: the
big sessions start early instead of leaving one worker busy at the end while the others
idle, which is what makes the throughput scale with the workers.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from .worker import Task, run_task


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))  # what this process may use, not what the box has
    except AttributeError:
        return os.cpu_count() or 1


def _failure(task: Task, code: str, message: str) -> dict[str, Any]:
    return {
        "input": task.rel,
        "outputs": {},
        "errors": {"*": {"code": code, "message": message}},
        "problems": {},
        "status": "failed",
    }


def run_inline(tasks: Iterable[Task]) -> Iterator[dict[str, Any]]:
    """One after the other in this process (``--jobs 1``): no pickling, no pool."""
    for task in tasks:
        yield run_task(task)


def pool_context() -> multiprocessing.context.BaseContext:
    """How pool workers are started."""
    # A worker forked from this process starts with everything already imported (a
    # worker that imports piconv and its converters afresh costs about a quarter of a
    # second of CPU). Forking a process that runs threads (an embedding application, a
    # Dask client) can deadlock the child, so then the forkserver starts the workers.
    # Workers are not recycled: converting the same session again and again in one
    # process leaves its peak memory where the first conversion put it (docs/bulk.md).
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork" if threading.active_count() == 1 else "forkserver")
    return multiprocessing.get_context()


def run_local(tasks: list[Task], jobs: int) -> Iterator[dict[str, Any]]:
    """A process pool of ``jobs`` workers. A worker that dies (killed, out of memory)
    breaks the pool: the tasks it took down are reported failed, and the next run
    retries them."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    from .manifest import drop_inherited_lock

    def new_pool() -> ProcessPoolExecutor:
        # chosen anew: after a worker died, the old pool's threads may still be running
        context = pool_context()
        forked = context.get_start_method() == "fork"
        return ProcessPoolExecutor(
            max_workers=jobs, mp_context=context, initializer=drop_inherited_lock if forked else None
        )

    pool = new_pool()
    pending: dict[Any, Task] = {}
    queue = list(reversed(tasks))  # pop() from the end = largest first
    # A bounded window of submitted tasks keeps the parent's memory flat for any corpus.
    window = jobs * 4
    try:
        while queue or pending:
            while queue and len(pending) < window:
                task = queue.pop()
                pending[pool.submit(run_task, task)] = task
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            broken = False
            for future in done:
                task = pending.pop(future)
                try:
                    yield future.result()
                except BrokenProcessPool:
                    broken = True
                    yield _failure(
                        task, "bulk:worker-died", "the worker process died while converting this file"
                    )
                except Exception as exc:
                    yield _failure(task, "bulk:internal-error", f"{type(exc).__name__}: {exc}")
            if broken:
                # Every task still in the dead pool is lost with it; a fresh pool takes the rest.
                for task in pending.values():
                    yield _failure(
                        task, "bulk:worker-died", "a worker process died; this file was not converted"
                    )
                pending.clear()
                pool.shutdown(wait=False, cancel_futures=True)
                pool = new_pool()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def run_dask(tasks: list[Task], client: Any, expected: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """On a Dask cluster, through ``client``, already checked
    (:func:`piconv.bulk.cluster.connected`). The workers must see the input and output
    directories at the same paths (a shared file system): they read and write the files
    themselves, so no session or output travels through the scheduler. Each task checks
    that its worker's piconv and plugins are ``expected`` (a worker may join late)."""
    from dask.distributed import as_completed

    from .cluster import run_checked

    # pure=False: two runs must not be served a cached result; the files may have changed.
    futures = client.map(run_checked, tasks, expected=expected, pure=False)  # tasks come largest first
    by_key = {f.key: t for f, t in zip(futures, tasks, strict=True)}
    finished = False
    try:
        for future in as_completed(futures):
            task = by_key[future.key]
            try:
                yield future.result()
            except Exception as exc:  # KilledWorker and friends: this file failed, the run goes on
                yield _failure(task, "bulk:worker-died", f"{type(exc).__name__}: {exc}")
            future.release()
        finished = True
    finally:
        if not finished:  # an interrupted run leaves no task behind on the cluster
            with contextlib.suppress(Exception):
                client.cancel(futures)
