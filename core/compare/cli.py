"""``piconv diff``: the command-line face of :func:`piconv.diff` (see docs/diff.md)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ..cliparse import UsageParser, help_formatter, one_shot
from ..errors import UsageError

DESCRIPTION = """\
Compare two conversations: two branches of one session, or two sessions (a fork and the
session it was copied from, or any two). Shows the part they share, where they part,
each side's turns, tool calls, errors, tokens, cost, wall time, models and files, and the
turns side by side.

  piconv diff SESSION --leaf A --against B      two leaves (ids, id prefixes or labels)
  piconv diff SESSION_A SESSION_B               two sessions, each at its leaf
  piconv diff A B --json | --to html -o d.html  as JSON, or a page (html, markdown)
"""


def parser() -> UsageParser:
    p = UsageParser(prog="piconv diff", description=DESCRIPTION, formatter_class=help_formatter)
    p.add_argument("sessions", nargs="+", metavar="SESSION", help="one session file, or two")
    p.add_argument(
        "--leaf",
        metavar="ID",
        help="side A ends at this entry (an id, a unique id prefix or a label; default: the leaf)",
    )
    p.add_argument(
        "--against",
        metavar="ID",
        help="side B ends at this entry (of the same session, or of the second one; default: its leaf)",
    )
    p.add_argument("--json", action="store_true", help="the comparison as JSON")
    p.add_argument(
        "--to",
        "-t",
        metavar="FORMAT",
        help="a page showing the two sides next to each other (html, markdown)",
    )
    p.add_argument("-o", "--output", metavar="PATH", help="write to PATH instead of stdout")
    p.add_argument(
        "--width", type=int, metavar="N", help="text lines of at most N columns (default: the terminal's)"
    )
    p.add_argument("--from", "-f", dest="from_", metavar="FORMAT", help="input format (default: detected)")
    p.add_argument("--recover-glued", action="store_true", help="recover glued JSON objects")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def terminal_width() -> int:
    """The terminal's width, 100 when there is no terminal."""
    from ..terminal import terminal_width as width

    return width(100)


def main(args: Sequence[str]) -> int:
    ns = parser().parse_args(list(args))
    return run(ns)


def run(ns: argparse.Namespace) -> int:
    one_shot()
    from ..api import diff, render_diff
    from ..output import output_to

    if len(ns.sessions) > 2:
        raise UsageError(
            "piconv diff compares one session's two leaves, or two sessions: give one or two files"
        )
    if ns.json and ns.to:
        raise UsageError("--json and --to: choose one")
    if ns.width is not None and (ns.json or ns.to):
        raise UsageError("--width applies to the text output")
    if ns.sessions.count("-") > 1:
        raise UsageError("standard input ('-') can be one of the sessions, not both")
    if len(ns.sessions) == 1 and ns.against is None:
        raise UsageError("one session: name the two leaves to compare, --leaf A --against B")
    from ..catalog.cli import resolve_input

    # a session of pi's directory may be named by the start of its id or file name
    sources = [s if s == "-" or os.path.exists(s) else resolve_input(s) for s in ns.sessions]
    result = diff(
        sources[0],
        sources[1] if len(sources) == 2 else None,
        leaf=ns.leaf,
        against=ns.against,
        reader=ns.from_,
        recover_glued=ns.recover_glued,
    )
    if ns.to:
        data = render_diff(result, ns.to)
    elif ns.json:
        from ..jsonio import dumps

        data = dumps(result.to_json(), indent=True) + b"\n"
    else:
        from .text import render_text

        width = ns.width if ns.width is not None else terminal_width()
        data = render_text(result, width).encode("utf-8", "backslashreplace")
    target = ns.output if ns.output not in (None, "-") else sys.stdout.buffer
    inputs = [os.path.abspath(s) for s in sources if s != "-"]
    with output_to(target, inputs=inputs) as sink:
        sink.write(data)
    return 0
