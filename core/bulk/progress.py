"""Progress on stderr: a one-line bar on a terminal, plain log lines otherwise.

Hand-written (about a hundred lines) rather than ``tqdm`` or ``rich``: the bar needs
files, bytes, rate, ETA and a failure count, which is a format string, and a dependency
would be imported by every bulk run for it.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from .shown import shown

BAR_WIDTH = 24
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
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.tty = self.stream.isatty() if tty is None else tty
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
            self.stream.write(f"piconv: {self._status(now)}\n")
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

    def _status(self, now: float) -> str:
        elapsed = max(now - self.started, 1e-9)
        rate = self.bytes / elapsed
        left = self.total_bytes - self.bytes
        eta = human_time(left / rate) if rate > 0 and self.files else "?"
        fail = f", {self.failed} failed" if self.failed else ""
        return (
            f"{self.files}/{self.total_files} files, {human_bytes(self.bytes)}/{human_bytes(self.total_bytes)}, "
            f"{human_bytes(rate)}/s, ETA {eta}{fail}"
        )

    def _draw(self, now: float) -> None:
        self._drawn = now
        fraction = (
            self.bytes / self.total_bytes if self.total_bytes else (self.files / max(self.total_files, 1))
        )
        filled = int(BAR_WIDTH * min(fraction, 1.0))
        bar = "█" * filled + "░" * (BAR_WIDTH - filled)
        self.stream.write(f"\r\x1b[K{bar} {self._status(now)}")
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
