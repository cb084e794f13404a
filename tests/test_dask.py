"""A directory run on Dask: the cluster is found (``--scheduler`` or ``DASK_SCHEDULER_ADDRESS``)
and checked once before any task, nothing is created before a usage error, the lock is
released on every way out, and a worker killed mid-run costs at most the files it held.

One ``LocalCluster`` of two worker processes serves the whole module, on loopback only.
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import dask.distributed as distributed  # the test extras bring Dask
import pytest
from piconv.bulk import run_bulk
from piconv.bulk.cluster import facts, run_checked
from piconv.bulk.worker import FormatSpec, Task
from piconv.errors import InputError, OutputError, PluginError, UsageError
from test_bulk import conversation

SESSIONS = 6


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        worker_dashboard_address=None,
    ) as local:
        yield local


@pytest.fixture
def client(cluster: Any) -> Iterator[Any]:
    with distributed.Client(cluster) as c:
        c.wait_for_workers(1, timeout=180)  # the last test kills one; its nanny restarts it
        yield c


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    src = tmp_path / "in"
    src.mkdir()
    for n in range(SESSIONS):
        (src / f"s{n}.jsonl").write_bytes(conversation(f"s{n}", f"task {n}"))
    return src


def _on_workers(client: Any, code: str) -> None:
    """Runs ``code`` in every worker process (the way a worker with other code is made)."""
    client.run(exec, code, {})


def _lock_is_free(outdir: Path) -> bool:
    fd = os.open(outdir / ".piconv-lock", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def _piconv(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("DASK_")}
    return subprocess.run(
        [sys.executable, "-m", "piconv", *args],
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        timeout=120,
    )


# --------------------------------------------------------------------------- finding the scheduler


def test_the_scheduler_comes_from_dask_scheduler_address(
    cluster: Any, sessions: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    run = _piconv(
        str(sessions), "--to", "ir", "-o", str(out), "--executor", "dask",
        env={"DASK_SCHEDULER_ADDRESS": cluster.scheduler_address},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in out.glob("*.json")) == [f"s{n}.ir.json" for n in range(SESSIONS)]
    assert f"{SESSIONS} converted" in run.stderr
    assert _lock_is_free(out)


def test_no_scheduler_is_a_usage_error_before_anything_is_created(
    monkeypatch: pytest.MonkeyPatch, sessions: Path, tmp_path: Path
) -> None:
    import dask.config

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    out = tmp_path / "out"
    with dask.config.set({"scheduler-address": None}), pytest.raises(UsageError) as caught:
        run_bulk(str(sessions), str(out), ["ir"], executor="dask", quiet=True)
    assert "--executor dask needs --scheduler ADDRESS or DASK_SCHEDULER_ADDRESS" in str(caught.value)
    assert not out.exists()


def test_an_unreachable_scheduler_is_a_usage_error_before_anything_is_created(
    sessions: Path, tmp_path: Path
) -> None:
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "out"
    started = time.monotonic()
    run = _piconv(
        str(sessions), "--to", "ir", "-o", str(out), "--executor", "dask", "--scheduler", f"tcp://127.0.0.1:{port}",
        env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"},
    )  # fmt: skip
    assert run.returncode == 2, run.stderr
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}" in run.stderr
    assert "Traceback" not in run.stderr
    assert not out.exists()  # no OUTDIR, no .piconv-lock left behind
    assert time.monotonic() - started < 60


# --------------------------------------------------------------------------- the check before any task


def test_a_worker_on_another_piconv_version_stops_the_run_before_any_task(
    client: Any, sessions: Path, tmp_path: Path
) -> None:
    _on_workers(
        client, "import piconv.version as v; v._real_version = v.__version__; v.__version__ = '0.0.1-other'"
    )
    try:
        with pytest.raises(PluginError) as caught:
            run_bulk(str(sessions), str(tmp_path / "out"), ["ir"], client=client, quiet=True)
    finally:
        _on_workers(client, "import piconv.version as v; v.__version__ = v._real_version")
    message = str(caught.value)
    assert "Dask workers differ from this client" in message
    assert message.count("has piconv 0.0.1-other, the client ") == 2  # both workers named
    assert caught.value.exit_code == 4
    assert not (tmp_path / "out").exists()


def test_an_input_a_worker_cannot_read_is_one_error_up_front(
    client: Any, sessions: Path, tmp_path: Path
) -> None:
    hide = (
        "import os, types, piconv.bulk.cluster as c\n"
        "def listdir(path, real=os.listdir):\n"
        "    raise PermissionError(13, 'Permission denied', path)\n"
        "c.os = types.SimpleNamespace(**{**vars(os), 'listdir': listdir})\n"
    )
    _on_workers(client, hide)
    try:
        with pytest.raises(InputError) as caught:
            run_bulk(str(sessions), str(tmp_path / "out"), ["ir"], client=client, quiet=True)
    finally:
        _on_workers(client, "import os, piconv.bulk.cluster as c; c.os = os")
    message = str(caught.value)
    assert message.startswith(f"{sessions}: not readable from Dask workers (tcp://127.0.0.1:")
    assert "Permission denied" in message and caught.value.exit_code == 3
    assert not (tmp_path / "out").exists()
    # The same cluster, readable again: the run goes through.
    summary = run_bulk(str(sessions), str(tmp_path / "out"), ["ir"], client=client, quiet=True)
    assert (summary.converted, summary.failed) == (SESSIONS, 0)


def test_an_output_directory_a_worker_cannot_write_is_one_error_up_front(
    client: Any, sessions: Path, tmp_path: Path
) -> None:
    deny = (
        "import os, types, piconv.bulk.cluster as c\n"
        "c.os = types.SimpleNamespace(**{**vars(os), 'access': lambda path, mode: False})\n"
    )
    _on_workers(client, deny)
    try:
        with pytest.raises(OutputError) as caught:
            run_bulk(str(sessions), str(tmp_path / "new" / "out"), ["ir"], client=client, quiet=True)
    finally:
        _on_workers(client, "import os, piconv.bulk.cluster as c; c.os = os")
    message = str(caught.value)
    # OUTDIR does not exist yet: the directory it will be made in is what must be writable
    assert message.startswith(f"{tmp_path / 'new' / 'out'}: not writable from Dask workers (tcp://127.0.0.1:")
    assert f"{tmp_path}: not writable" in message and caught.value.exit_code == 6
    assert not (tmp_path / "new").exists()


def test_a_worker_that_joins_after_the_check_converts_nothing_with_other_code(tmp_path: Path) -> None:
    src = tmp_path / "a.jsonl"
    src.write_bytes(conversation("a"))
    task = Task("a.jsonl", str(src), str(tmp_path), (FormatSpec("ir", "a.json"),), root=str(tmp_path))
    mine = facts(("ir",))
    assert run_checked(task, mine)["status"] == "ok" and (tmp_path / "a.json").is_file()
    (tmp_path / "a.json").unlink()
    other = {"piconv": mine["piconv"], "formats": {"ir": "ir from someone-else 9.9"}}
    result = run_checked(task, other)
    assert result["status"] == "failed" and not (tmp_path / "a.json").exists()
    assert result["errors"]["*"]["code"] == "bulk:worker-mismatch"
    assert f"format 'ir': {mine['formats']['ir']}, " in result["errors"]["*"]["message"]
    assert "the client ir from someone-else 9.9" in result["errors"]["*"]["message"]


def test_usage_errors_come_before_the_cluster_and_the_output_directory(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--jobs must be at least 1"):
        run_bulk(
            str(tmp_path), str(tmp_path / "out"), ["ir"], executor="dask", jobs=0, scheduler="tcp://0.0.0.0:1"
        )
    assert not (tmp_path / "out").exists()


def test_the_lock_is_released_when_the_run_is_interrupted(
    client: Any, sessions: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    stop = threading.Event()

    class Interrupting:
        """A progress stream that raises KeyboardInterrupt at the first failure line."""

        def write(self, text: str) -> int:
            if "failed" in text:
                stop.set()
                raise KeyboardInterrupt
            return len(text)

        def flush(self) -> None:
            pass

        def isatty(self) -> bool:
            return False

    (out / "s0.ir.json").mkdir(parents=True)  # in the way of an output: that session fails
    with pytest.raises(KeyboardInterrupt):
        run_bulk(str(sessions), str(out), ["ir"], client=client, progress_stream=Interrupting())
    assert stop.is_set() and _lock_is_free(out)


# --------------------------------------------------------------------------- a worker killed mid-run

SLOW = """\
import os, time, piconv.bulk.cluster as c
real = getattr(c, "_real_run_task", c.run_task)
c._real_run_task = real
def slow(task, real=real, armed={armed!r}, pid={pid!r}):
    if task.rel == "slow.jsonl":
        try:
            os.rename(armed, armed + ".taken")  # the first worker to take it, once
        except FileNotFoundError:
            pass
        else:
            with open(pid + ".tmp", "w") as fh:
                fh.write(str(os.getpid()))
            os.rename(pid + ".tmp", pid)
            time.sleep(120)
    return real(task)
c.run_task = slow
"""


def _kill_the_worker_holding_slow(client: Any, src: Path, out: Path, tmp_path: Path, **kw: Any) -> Any:
    """Runs ``run_bulk`` while the worker converting ``slow.jsonl`` is killed with SIGKILL."""
    armed, pid = tmp_path / "armed", tmp_path / "slow.pid"
    pid.unlink(missing_ok=True)
    armed.write_text("")
    _on_workers(client, SLOW.format(armed=str(armed), pid=str(pid)))
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(run_bulk, str(src), str(out), ["ir"], client=client, quiet=True, **kw)
        deadline = time.monotonic() + 60
        while not pid.exists():
            assert time.monotonic() < deadline and not running.done(), "the slow task never started"
            time.sleep(0.01)
        assert (out / ".piconv-lock").exists() and not _lock_is_free(out)  # mid-run
        os.kill(int(pid.read_text()), signal.SIGKILL)
        return running.result(timeout=120)


def test_a_worker_killed_mid_run(cluster: Any, client: Any, sessions: Path, tmp_path: Path) -> None:
    """Last in the module: it leaves one worker restarting."""
    client.wait_for_workers(2, timeout=180)
    (sessions / "slow.jsonl").write_bytes(conversation("slow", "slow"))
    out = tmp_path / "out"

    # Dask's default: the task of the killed worker goes to another one; nothing is lost.
    summary = _kill_the_worker_holding_slow(client, sessions, out, tmp_path)
    assert (summary.converted, summary.failed) == (SESSIONS + 1, 0), summary.failures
    assert (out / "slow.ir.json").is_file() and _lock_is_free(out)

    # With no retry allowed, the files the dead worker held fail (bulk:worker-died), the rest
    # are written, the lock is released, and the next run converts what failed.
    client.wait_for_workers(2, timeout=180)  # the nanny has restarted the killed one (slow when busy)
    allowed = cluster.scheduler.allowed_failures
    cluster.scheduler.allowed_failures = 0
    try:
        again = _kill_the_worker_holding_slow(client, sessions, tmp_path / "out2", tmp_path)
    finally:
        cluster.scheduler.allowed_failures = allowed
    failed = {f["input"]: f["code"] for f in again.failures}
    assert "slow.jsonl" in failed and set(failed.values()) == {"bulk:worker-died"}, again.failures
    assert again.converted + again.failed == SESSIONS + 1
    assert not (tmp_path / "out2" / "slow.ir.json").exists() and _lock_is_free(tmp_path / "out2")
    rerun = run_bulk(str(sessions), str(tmp_path / "out2"), ["ir"], client=client, quiet=True)
    assert (rerun.converted, rerun.up_to_date, rerun.failed) == (len(failed), again.converted, 0)
