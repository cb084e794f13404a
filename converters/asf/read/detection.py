"""Recognising an ASF file from its first bytes (the ``asf`` reader's ``detect``).

Small on purpose: every input piconv reads without ``--from`` is shown to it, so it
imports nothing of the reader.
"""

from __future__ import annotations

import re

import orjson

_FORMAT = re.compile(rb'"format"\s*:\s*"agentsession/')
_SESSION = re.compile(rb'"type"\s*:\s*"session"')


def detect(head: bytes) -> float:
    """1 for a file whose first line is an ASF session header (``"format":
    "agentsession/…"``); 0.9 when that line is too long to be shown whole but says so;
    0 otherwise."""
    line = head.split(b"\n", 1)[0].removeprefix(b"\xef\xbb\xbf").strip()
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        import json

        try:  # a lone surrogate escape: the stdlib reads it
            value = json.loads(line)
        except (ValueError, RecursionError):
            value = None
    if value is None:
        if b"\n" not in head and _FORMAT.search(line) and _SESSION.search(line):
            return 0.9  # the head ends inside the header line
        return 0.0
    if type(value) is not dict or value.get("type") != "session":
        return 0.0
    fmt = value.get("format")
    return 1.0 if type(fmt) is str and fmt.startswith("agentsession/") else 0.0
