"""Paths as a reader wants them: a home directory written ``~``, as pi's own export and
shell prompts show it. For display only: the full path stays wherever the format can
keep it (the HTML page's hover text); redaction (``--redact``) is what removes it."""

from __future__ import annotations

import re

# /Users/NAME, /home/NAME, /root and C:\Users\NAME, each followed by a separator or the end.
_HOME = re.compile(r"(?:/Users/[^/]+|/home/[^/]+|/root|[A-Za-z]:\\Users\\[^\\]+)(?=[/\\]|\Z)")


def home_short(path: str) -> str:
    """``path`` with a leading home directory written ``~`` (``/Users/ann/src`` is
    ``~/src``); any other path as it is."""
    m = _HOME.match(path)
    return "~" + path[m.end() :] if m else path
