"""Bulk runs against hostile directories, run as a user runs them (``python -m piconv DIR``):
an OUTDIR around the input, names of any bytes, a poisoned manifest, files swapped while
the run goes, colliding output names, full and read-only disks."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))
from test_bulk import conversation  # noqa: E402


def piconv(
    *args: str | os.PathLike[str], cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONUTF8": "0"}
    return subprocess.run(
        [sys.executable, "-m", "piconv", *map(str, args)],
        capture_output=True,
        cwd=cwd,
        timeout=timeout,
        env=env,
    )


def manifest_lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / ".piconv-manifest.jsonl").read_bytes().splitlines()]


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------- 2: OUTDIR around the input


def test_outdir_around_the_input_never_touches_an_input(tmp_path: Path) -> None:
    (tmp_path / "in" / "in").mkdir(parents=True)
    (tmp_path / "in" / "a.jsonl").write_bytes(conversation("outer"))
    (tmp_path / "in" / "in" / "a.jsonl").write_bytes(conversation("inner"))
    (tmp_path / "in" / "in" / "b.jsonl").write_bytes(conversation("b"))
    before = tree(tmp_path / "in")
    for _ in range(2):  # the second run must not take the first run's outputs as inputs
        run = piconv("in", "--to", "pi", "--to", "html", "-o", ".", cwd=tmp_path)
        assert tree(tmp_path / "in") == before, run.stderr
        err = run.stderr.decode()
        assert run.returncode == 1, err
        assert "in/a.jsonl: bulk:output-in-input" in err
        assert "in/b.jsonl: bulk:output-in-input" in err
    assert (tmp_path / "a.html").is_file()
    assert not (tmp_path / "in" / "b.html").exists()


def test_outdir_inside_the_input_still_works(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.jsonl").write_bytes(conversation("a"))
    for _ in range(2):
        run = piconv(src, "--to", "pi", "-o", src / "out")
        assert run.returncode == 0, run.stderr
    assert (src / "out" / "a.pi.jsonl").is_file()
    assert not (src / "out" / "out").exists()


# ---------------------------------------------------------------- 3: names that are not UTF-8


def test_a_name_that_is_not_utf8_survives_and_is_shown_escaped(tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    raw = os.path.join(os.fsencode(src), b"\xff.jsonl")
    with open(raw, "wb") as fh:
        fh.write(conversation("ff"))
    with open(os.path.join(os.fsencode(src), b"bad\xfe.jsonl"), "wb") as fh:
        fh.write(b"not json\n")
    run = piconv(src, "--to", "html", "--to", "markdown", "-o", out)
    assert run.returncode == 0, run.stderr  # not a session: listed, not failed
    assert b"\\xfe" in run.stderr and b"\xfe" not in run.stderr
    assert os.path.isfile(os.path.join(os.fsencode(out), b"\xff.html"))
    index = (out / "index.html").read_text()
    assert 'href="./%FF.html"' in index
    assert "(<./%FF.md>)" in (out / "index.md").read_text()
    os.unlink(raw)
    again = piconv(src, "--to", "html", "-o", out)
    assert again.returncode == 0 and b"Traceback" not in again.stderr, again.stderr
    assert b"1 skipped, not sessions" in again.stderr


# ---------------------------------------------------------------- 4: a poisoned manifest


def test_infinite_tokens_never_reach_the_manifest(tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    text = conversation("inf", prompt="SURROGATE lone").decode().replace("SURROGATE", "\\ud800")
    text = text.replace('"totalTokens":15', '"totalTokens":1e400').replace('"total":0.003', '"total":1e400')
    assert "\\ud800" in text
    assert "1e400" in text
    (src / "a.jsonl").write_text(text)
    for _ in range(2):
        run = piconv(src, "--to", "html", "-o", out)
        assert run.returncode == 0, run.stderr
    assert b"Infinity" not in (out / ".piconv-manifest.jsonl").read_bytes()
    assert "a.html" in (out / "index.html").read_text()


def test_a_bad_manifest_record_is_reported_and_dropped(tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    (src / "a.jsonl").write_bytes(conversation("a"))
    (src / "b.jsonl").write_bytes(conversation("b"))
    assert piconv(src, "--to", "html", "-o", out).returncode == 0
    path = out / ".piconv-manifest.jsonl"
    lines = path.read_text().splitlines()
    poisoned = [
        ln.replace('"tokens":', '"tokens":Infinity,"x":') if '"a.jsonl"' in ln else ln for ln in lines
    ]
    poisoned.append('{"v":1,"input":"c.jsonl","outputs":[],"meta":"x","status":"ok"}')
    path.write_text("\n".join(poisoned) + "\n")
    (out / "index.html").unlink()
    run = piconv(src, "--to", "html", "-o", out)
    err = run.stderr.decode()
    assert run.returncode == 0, err
    assert "manifest" in err and "dropped" in err
    assert "1 converted, 1 skipped" in err  # a.jsonl lost its record and is converted again
    index = (out / "index.html").read_text()
    assert "a.html" in index and "b.html" in index
    assert b"Infinity" not in path.read_bytes()


# ---------------------------------------------------------------- 7: swapped while the run goes


@contextlib.contextmanager
def swapper(target: Path, make: callable) -> Iterator[None]:
    """Keep replacing ``target`` with what ``make`` creates until the block ends."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            tmp = target.with_name(".swap")
            with contextlib.suppress(OSError):
                make(tmp)
                os.replace(tmp, target)
            time.sleep(0.001)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def test_a_symlink_or_fifo_swapped_in_is_refused_when_opened(tmp_path: Path) -> None:
    from piconv.bulk import worker

    src, out, outside = tmp_path / "in", tmp_path / "out", tmp_path / "secret.jsonl"
    src.mkdir()
    outside.write_bytes(conversation("SECRET-SESSION"))
    (src / "a.jsonl").write_bytes(conversation("a"))
    os.symlink(outside, src / "link.jsonl")  # what the run would meet if swapped in after the scan
    os.mkfifo(src / "fifo.jsonl")
    # The scan refuses these two; the open must refuse them too when they appear later.
    task = worker.Task("x", str(src / "link.jsonl"), str(out), (), root=str(src), open_rel="link.jsonl")
    result = worker.run_task(task)
    assert result["errors"]["load"]["code"] == "bulk:not-a-file", result
    task = worker.Task("x", str(src / "fifo.jsonl"), str(out), (), root=str(src), open_rel="fifo.jsonl")
    started = time.monotonic()
    result = worker.run_task(task)
    assert time.monotonic() - started < 5
    assert result["errors"]["load"]["code"] == "bulk:not-a-file", result


def test_a_session_swapped_for_a_link_mid_run_is_not_exported(tmp_path: Path) -> None:
    src, out, outside = tmp_path / "in", tmp_path / "out", tmp_path / "secret.jsonl"
    src.mkdir()
    outside.write_bytes(conversation("SECRET-SESSION"))
    for i in range(40):
        (src / f"s{i:02}.jsonl").write_bytes(conversation(f"s{i}", turns=30))
    target = src / "s20.jsonl"
    with swapper(target, lambda tmp: os.symlink(outside, tmp)):
        run = piconv(src, "--to", "html", "-o", out, "--jobs", "2", timeout=60)
    assert run.returncode in (0, 1), run.stderr
    for page in out.glob("*.html"):
        assert "SECRET-SESSION" not in page.read_text()


def test_a_fifo_swapped_in_mid_run_does_not_block(tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    for i in range(40):
        (src / f"s{i:02}.jsonl").write_bytes(conversation(f"s{i}", turns=30))
    with swapper(src / "s30.jsonl", lambda tmp: os.mkfifo(tmp)):
        run = piconv(src, "--to", "html", "-o", out, "--jobs", "2", timeout=60)
    assert run.returncode in (0, 1), run.stderr


# ---------------------------------------------------------------- 17: colliding output names


def test_colliding_output_names_are_reported_never_lost(tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    (src / "index.jsonl").write_bytes(conversation("first"))
    (src / "index.session.jsonl").write_bytes(conversation("second"))
    (src / ".piconv-manifest.jsonl").write_bytes(conversation("third"))
    run = piconv(src, "--to", "html", "--to", "pi", "-o", out)
    err = run.stderr.decode()
    assert run.returncode == 1, err
    assert "index.session.jsonl: bulk:name-collision" in err and "index.jsonl" in err
    assert "first" in (out / "index.session.html").read_text()
    assert (out / ".piconv-manifest.pi.jsonl").is_file()  # the manifest keeps its name
    assert all(isinstance(r, dict) for r in manifest_lines(out))


# ---------------------------------------------------------------- 18: control characters


def test_failure_lines_escape_control_characters(tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    (src / "\x1b[31mred\x1b]0;title\x07.jsonl").write_bytes(b"")
    run = piconv(src, "--to", "html", "-o", out)
    assert run.returncode == 0  # an empty file is no session: listed, not failed
    assert b"\x1b" not in run.stderr and b"\x07" not in run.stderr
    assert b"\\x1b[31mred" in run.stderr


# ---------------------------------------------------------------- 20: long names, full and read-only disks


def test_a_249_character_name_is_exported(tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    name = "x" * 243 + ".jsonl"
    assert len(name) == 249
    (src / name).write_bytes(conversation("long"))
    run = piconv(src, "--to", "html", "--to", "ir", "-o", out)
    assert run.returncode == 0, run.stderr
    assert (out / ("x" * 243 + ".html")).is_file()


@contextlib.contextmanager
def tmpfs(where: Path, size: str, *extra: str) -> Iterator[Path]:
    where.mkdir()
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    ).returncode:
        pytest.skip("needs root to mount a small file system")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_disk_gives_an_error_a_summary_and_a_whole_manifest(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    for i in range(30):
        (src / f"s{i:02}.jsonl").write_bytes(conversation(f"s{i}", turns=40))
    with tmpfs(tmp_path / "disk", "160k") as out:
        run = piconv(src, "--to", "html", "--to", "markdown", "-o", out, "--jobs", "1")
        err = run.stderr.decode()
        assert run.returncode == 6, err
        assert "Traceback" not in err
        assert "piconv: error:" in err and "No space left" in err
        assert "converted" in err and "failed" in err  # the summary
        for line in (out / ".piconv-manifest.jsonl").read_bytes().splitlines():
            json.loads(line)  # every line whole
        assert not [p for p in out.rglob("*tmp*")]


def test_a_read_only_outdir_gives_an_error_and_a_summary(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.jsonl").write_bytes(conversation("a"))
    with tmpfs(tmp_path / "disk", "1m") as out:
        assert piconv(src, "--to", "html", "-o", out).returncode == 0
        (src / "b.jsonl").write_bytes(conversation("b"))
        before = (out / ".piconv-manifest.jsonl").read_bytes()
        subprocess.run(["mount", "-o", "remount,ro", str(out)], check=True)
        run = piconv(src, "--to", "html", "-o", out)
        err = run.stderr.decode()
        assert run.returncode == 6, err
        assert "Traceback" not in err and "piconv: error:" in err and "Read-only" in err
        assert "1 skipped" in err and "1 failed" in err
        assert (out / ".piconv-manifest.jsonl").read_bytes() == before


# ---------------------------------------------------------------- a per-session time limit


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_session_over_the_time_limit_fails_alone(tmp_path: Path, jobs: str) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    (src / "big.jsonl").write_bytes(conversation("big", turns=3000))
    run = piconv(src, "--to", "html", "-o", out, "--jobs", jobs, "--timeout", "0.01")
    err = run.stderr.decode()
    assert run.returncode == 1, err
    assert "big.jsonl: bulk:timeout" in err
    assert not (out / "big.html").exists()
    assert not [p for p in out.rglob("*.tmp")]
    again = piconv(src, "--to", "html", "-o", out, "--jobs", jobs)  # the default is generous
    assert again.returncode == 0, again.stderr
    assert (out / "big.html").is_file()


def test_a_time_out_swallowed_once_comes_again_and_nothing_is_left_armed() -> None:
    """A TimedOut raised where it is only reported (a ``__del__``, a generator closed as it
    is collected: here a plain ``except``) does not let the task run on past its limit;
    once the block is left no alarm is pending and the previous handler is back."""
    import signal
    import time

    from piconv.bulk.timelimit import TimedOut, time_limit

    before = signal.getsignal(signal.SIGALRM)
    swallowed = False
    started = time.monotonic()
    with pytest.raises(TimedOut), time_limit(0.01):
        try:
            time.sleep(5)
        except TimedOut:
            swallowed = True
        time.sleep(5)
    assert swallowed
    assert time.monotonic() - started < 5
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is before


def test_the_documented_default_time_limit_is_the_real_one() -> None:
    from piconv.bulk.timelimit import DEFAULT_SECONDS

    assert f"default {DEFAULT_SECONDS:g}" in piconv("--help").stdout.decode()
    assert f"{DEFAULT_SECONDS:g} s" in (TESTS.parent / "docs" / "bulk.md").read_text()


def test_a_time_limit_of_a_microsecond_does_not_spin_nor_stay_armed() -> None:
    """``--timeout 0.000001``: the alarm can come before the limit is fully set up, and
    it repeats no more often than every ``MIN_RETRY_SECONDS``, so a task swallowing it
    still gets the processor; once out of the block nothing is armed."""
    import signal
    import time

    from piconv.bulk.timelimit import MIN_RETRY_SECONDS, TimedOut, time_limit

    before = signal.getsignal(signal.SIGALRM)
    for _ in range(20):
        alarms = 0
        started = time.monotonic()
        with contextlib.suppress(TimedOut), time_limit(0.000001):
            while time.monotonic() - started < 0.05:
                try:
                    time.sleep(0.05)
                except TimedOut:
                    alarms += 1
        assert alarms <= 0.05 / MIN_RETRY_SECONDS + 2
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        assert signal.getsignal(signal.SIGALRM) is before


def test_a_time_limit_gives_back_the_host_programs_own_timer() -> None:
    """A library caller's own interval timer survives a directory run's time limit: it is
    armed again, what remained of it counted down meanwhile."""
    import signal
    import time

    from piconv.bulk.timelimit import time_limit

    fired: list[int] = []
    before = signal.signal(signal.SIGALRM, lambda *_: fired.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30.0)
        with time_limit(5):
            time.sleep(0.05)
        left, _interval = signal.getitimer(signal.ITIMER_REAL)
        assert 29.0 < left < 30.0
        assert not fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
