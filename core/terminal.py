"""Names and messages as they are printed: nothing a file name holds can drive the terminal.

A file name may hold any bytes but ``/`` and NUL: control characters (an escape sequence
that recolours or retitles the terminal, a newline that forges a line of the summary)
and bytes that are not UTF-8, which Python keeps as lone surrogates. Every line the CLI
prints about a file (a single conversion, a directory run, search) passes :func:`shown`.
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, the line and paragraph separators, the bidirectional
# embeddings, overrides and isolates (which make a name read backwards: "gpj.exe"), and
# lone surrogates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape): show the byte
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def shown(text: str) -> str:
    """``text`` with every control character and undecodable byte written as an escape."""
    return _UNSAFE.sub(_escape, text)


def terminal_width(default: int) -> int:
    """The terminal's width: ``COLUMNS`` first (as argparse and shutil take it), then the
    terminal of standard output, else ``default``. Found as shutil finds it, without
    importing shutil (and the compression modules it brings) for a ``--help``."""
    import os
    import sys

    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or default
