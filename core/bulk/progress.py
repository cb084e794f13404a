"""Progress on stderr: a one-line bar on a capable terminal, plain log lines otherwise.

The bar is redrawn in place (carriage return and ``ESC [ K``) and cut to the terminal's
width, read at every redraw, so it never wraps, even after the window is resized. Without
a terminal (a pipe, a log file) or with ``TERM=dumb`` (an editor's shell, a CI log) there
is no escape code and no carriage return: a plain status line every ``LOG_EVERY_S``.

Hand-written (about a hundred lines) rather than ``tqdm`` or ``rich``: the bar needs
files, bytes, rate, ETA and a failure count, which is a format string, and a dependency
would be imported by every bulk run for it.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

from ..terminal import shown

BAR_WIDTH = 24
MIN_BAR = 6
"""Narrower than this, the bar is left out and the status alone is shown."""
REDRAW_S = 0.1
LOG_EVERY_S = 10.0


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


def human_time(seconds: float) -> str:
    seconds = max(0, int(seconds + 0.5))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


class Progress:
    """Counts finished files; ``quiet`` prints nothing at all."""

    def __init__(
        self,
        total_files: int,
        total_bytes: int,
        stream: TextIO | None = None,
        quiet: bool = False,
        tty: bool | None = None,
        columns: int | None = None,
    ) -> None:
        """``tty``: draw the bar in place (default: the stream is a terminal and ``TERM``
        is not ``dumb``). ``columns``: the width to fit (default: the terminal's, read at
        each redraw)."""
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.tty = _capable(self.stream) if tty is None else tty
        self.columns = columns
        self.total_files = total_files
        self.total_bytes = total_bytes
        self.files = 0
        self.bytes = 0
        self.failed = 0
        self.started = time.monotonic()
        self._drawn = 0.0
        self._logged = self.started
        self._bar_visible = False

    def advance(self, size: int, failed_message: str | None = None) -> None:
        self.files += 1
        self.bytes += size
        if failed_message is not None:
            self.failed += 1
            self.message(f"failed: {failed_message}")
        now = time.monotonic()
        if self.quiet:
            return
        if self.tty:
            if now - self._drawn >= REDRAW_S or self.files == self.total_files:
                self._draw(now)
        elif now - self._logged >= LOG_EVERY_S:
            self._logged = now
            width = self._width()
            status = self._status(now, None if width is None else width - 1 - len("piconv: "))
            self.stream.write(f"{self._fit('piconv: ' + status, width)}\n")
            self.stream.flush()

    def message(self, text: str) -> None:
        """A line that stays (a failure), printed above the bar."""
        if self.quiet:
            return
        if self._bar_visible:
            self.stream.write("\r\x1b[K")
            self._bar_visible = False
        self.stream.write(f"piconv: {shown(text)}\n")
        if self.tty:
            self._draw(time.monotonic())
        self.stream.flush()

    def _status(self, now: float, room: int | None = None) -> str:
        """Files, bytes, rate, ETA and failures; within ``room`` columns the rate, then
        the bytes, are left out before anything is cut."""
        elapsed = max(now - self.started, 1e-9)
        rate = self.bytes / elapsed
        left = self.total_bytes - self.bytes
        eta = human_time(left / rate) if rate > 0 and self.files else "?"
        files = f"{self.files}/{self.total_files} files"
        size = f"{human_bytes(self.bytes)}/{human_bytes(self.total_bytes)}"
        tail = [f"ETA {eta}"] + ([f"{self.failed} failed"] if self.failed else [])
        for parts in ([files, size, f"{human_bytes(rate)}/s", *tail], [files, size, *tail], [files, *tail]):
            text = ", ".join(parts)
            if room is None or len(text) <= room:
                break
        return text

    def _width(self) -> int | None:
        """Columns to fit, or None when unknown (not a terminal: a log line is not cut)."""
        if self.columns is not None:
            return self.columns
        try:
            return os.get_terminal_size(self.stream.fileno()).columns or None
        except (AttributeError, OSError, ValueError):
            return None

    @staticmethod
    def _fit(line: str, width: int | None) -> str:
        # One column short of the width: a character in the last column makes some
        # terminals wrap at once, which would leave the line drawn twice.
        if width is None or len(line) < width:
            return line
        room = max(width - 1, 1)
        return line[: room - 1] + "…" if room > 1 else line[:room]

    def _draw(self, now: float) -> None:
        self._drawn = now
        width = self._width() or 80
        status = self._status(now, width - 1)
        bar_width = min(BAR_WIDTH, width - 2 - len(status))
        if bar_width >= MIN_BAR:
            fraction = (
                self.bytes / self.total_bytes if self.total_bytes else (self.files / max(self.total_files, 1))
            )
            filled = int(bar_width * min(fraction, 1.0))
            line = "█" * filled + "░" * (bar_width - filled) + " " + status
        else:
            line = self._fit(status, width)
        self.stream.write(f"\r\x1b[K{line}")
        self.stream.flush()
        self._bar_visible = True

    def close(self) -> None:
        if self.quiet:
            return
        if self.tty and self._bar_visible:
            self._draw(time.monotonic())
            self.stream.write("\n")
            self._bar_visible = False
        self.stream.flush()


def _capable(stream: TextIO) -> bool:
    """A terminal that understands a carriage return and ``ESC [ K``."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or closed
        return False
    return tty and os.environ.get("TERM", "") != "dumb"
