"""``--report FILE``: a conversion's report as JSON, for one session (its loss report)
and for a directory run (its summary) alike.

Written as any output is (:func:`piconv.output.write_file`: never half a file), and
never over an input: not over the session converted, nor over any file of the input
directory of a directory run (a session, say).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .errors import OutputError


def write_report(target: str, content: Any, source: str) -> None:
    """``content`` (a JSON value) as indented JSON at ``target``; ``-`` is stderr.
    ``source``: the input converted, a file, a directory or ``-`` (stdin)."""
    from .jsonio import dumps
    from .output import inside, write_file

    data = dumps(content, indent=True) + b"\n"
    if target == "-":
        sys.stderr.buffer.write(data)
        return
    if source != "-" and os.path.isdir(source):
        final, root = os.path.realpath(target), os.path.realpath(source)
        if final != root and inside(final, root) and os.path.exists(final):
            raise OutputError(
                "is a file of the input directory: piconv never writes over its input", path=target
            )
    write_file(target, data, inputs=() if source == "-" else (source,))
