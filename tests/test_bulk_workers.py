"""The bulk pool's workers: how they start, and why they are never replaced during a run."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from piconv.bulk import run_bulk
from piconv.bulk.executors import pool_context
from test_bulk import conversation, make_tree

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the start methods are Linux's")


def test_workers_are_forked_from_a_process_without_threads() -> None:
    # A fresh interpreter: threads another test left behind cannot change the answer.
    code = "from piconv.bulk.executors import pool_context; print(pool_context().get_start_method())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "fork"  # a worker starts with piconv imported


def test_a_process_running_threads_gets_its_workers_from_a_fork_server() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)
    thread.start()
    try:
        assert pool_context().get_start_method() == "forkserver"
    finally:
        stop.set()
        thread.join()


def test_a_run_with_a_thread_running_still_converts_everything(tmp_path: Path) -> None:
    make_tree(tmp_path / "in")
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)
    thread.start()
    try:
        summary = run_bulk(
            str(tmp_path / "in"), str(tmp_path / "out"), ["markdown", "html"], jobs=2, quiet=True
        )
    finally:
        stop.set()
        thread.join()
    assert summary.failed == 0 and summary.converted > 0


_REPEAT = textwrap.dedent(
    """
    import io, resource, sys
    import piconv

    path, fmt = sys.argv[1], sys.argv[2]
    def peak() -> int:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(5):
        piconv.convert(path, fmt, io.BytesIO())
    settled = peak()
    for _ in range(40):
        piconv.convert(path, fmt, io.BytesIO())
    print(settled, peak())
    """
)


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_converting_again_and_again_in_one_process_does_not_grow_its_memory(fmt: str, tmp_path: Path) -> None:
    """Why a pool worker may live for the whole run: memory a converter (or a C library
    under it) kept after each session would pile up over a corpus. A session of a real
    one's size (1.1 MB), so what is kept per conversion shows within a few dozen."""
    session = tmp_path / "s.jsonl"
    session.write_bytes(conversation("big", turns=1800))
    assert len(session.read_bytes()) > 1_000_000
    done = subprocess.run(
        [sys.executable, "-c", _REPEAT, str(session), fmt], capture_output=True, text=True, check=True
    )
    settled, final = map(int, done.stdout.split())
    assert final - settled < 4 * 1024, f"peak grew by {final - settled} KiB over 40 conversions"
