"""The progress line of a directory run: cut to the terminal's width, redrawn in place only
on a capable terminal, plain lines under ``TERM=dumb`` or without a terminal."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from piconv.bulk.progress import Progress

REPO = Path(__file__).resolve().parent.parent
REDRAW = "\r\x1b[K"


class _Stream:
    """A stream that says it is a terminal (or not); no fileno, so the width is given."""

    def __init__(self, tty: bool) -> None:
        self.text = ""
        self.tty = tty

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return self.tty


def _run(progress: Progress, sizes: list[int], failed_at: int | None = None) -> None:
    for n, size in enumerate(sizes):
        progress.advance(size, "x.jsonl: bulk:not-a-session: empty" if n == failed_at else None)
    progress.close()


def _drawn(text: str) -> list[str]:
    """Every state the terminal line was left in: the pieces between redraws and newlines."""
    return [piece for line in text.split("\n") for piece in line.split(REDRAW) if piece]


@pytest.mark.parametrize("columns", [120, 80, 50, 30, 12])
def test_the_bar_fits_the_width_at_every_redraw(monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    monkeypatch.setenv("TERM", "xterm")
    stream = _Stream(True)
    p = Progress(1000, 12_345_678_901, stream, columns=columns)
    _run(p, [12_345_678] * 1000)
    drawn = [d for d in _drawn(stream.text)]
    assert drawn and REDRAW in stream.text
    status = [d for d in drawn if "files" in d or "…" in d]
    assert status, drawn
    assert all(len(d) <= columns - 1 for d in status), [d for d in status if len(d) >= columns]
    last = status[-1]
    if columns >= 80:  # everything, with the bar
        assert "█" in last and "1000/1000 files" in last and "/s" in last and "ETA" in last
    elif columns == 50:  # the rate goes first, the bar stays
        assert "1000/1000 files" in last and "/s" not in last and "ETA" in last
    elif columns == 30:  # then the bytes and the bar
        assert last.startswith("1000/1000 files, ETA") and "█" not in last
    else:  # and then the status is cut
        assert last.endswith("…") and len(last) == columns - 1


def test_a_failure_stays_above_the_bar_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm")
    stream = _Stream(True)
    _run(Progress(3, 3000, stream, columns=40), [1000, 1000, 1000], failed_at=1)
    assert "piconv: failed: x.jsonl: bulk:not-a-session: empty\n" in stream.text  # never cut
    assert stream.text.endswith("\n")


@pytest.mark.parametrize(("term", "tty"), [("dumb", True), ("xterm", False)])
def test_plain_lines_under_term_dumb_or_without_a_terminal(
    monkeypatch: pytest.MonkeyPatch, term: str, tty: bool
) -> None:
    monkeypatch.setenv("TERM", term)
    monkeypatch.setattr("piconv.bulk.progress.LOG_EVERY_S", 0.0)
    stream = _Stream(tty)
    _run(Progress(3, 3000, stream), [1000, 1000, 1000], failed_at=1)
    assert "\r" not in stream.text and "\x1b" not in stream.text
    lines = stream.text.splitlines()
    assert lines[0].startswith("piconv: 1/3 files, 1.0 KB/3.0 KB, ") and "ETA" in lines[0]
    assert "piconv: failed: x.jsonl: bulk:not-a-session: empty" in lines
    assert lines[-1].startswith("piconv: 3/3 files")


def _on_a_pty(args: list[str], columns: int, term: str) -> str:
    """Runs piconv with stderr on a pseudo-terminal ``columns`` wide; what it showed there."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {**os.environ, "TERM": term}
    env.pop("COLUMNS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "piconv", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the other side is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=120) == 0
    return b"".join(chunks).decode().replace("\r\n", "\n")  # the terminal's own newline


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    src = tmp_path / "in"
    src.mkdir()
    example = (REPO / "examples" / "basic.jsonl").read_bytes()
    for n in range(4):
        (src / f"session-with-a-long-name-{n}.jsonl").write_bytes(example)
    return src


def test_a_directory_run_on_a_50_column_terminal(sessions: Path, tmp_path: Path) -> None:
    shown = _on_a_pty([str(sessions), "--to", "ir", "-o", str(tmp_path / "out"), "--jobs", "1"], 50, "xterm")
    assert REDRAW in shown
    bars = [d for d in _drawn(shown) if "files" in d and not d.startswith("piconv:")]
    assert bars and all(len(b) <= 49 for b in bars), bars
    assert "4/4 files" in bars[-1]


def test_a_directory_run_under_term_dumb_has_no_escape_codes(sessions: Path, tmp_path: Path) -> None:
    shown = _on_a_pty([str(sessions), "--to", "ir", "-o", str(tmp_path / "out"), "--jobs", "1"], 50, "dumb")
    assert "\r" not in shown and "\x1b" not in shown
    assert re.search(r"^piconv: 4 converted", shown, re.M), shown
