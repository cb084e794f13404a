"""``piconv list`` and ``piconv stats``: the command-line face of :func:`piconv.sessions`
and :func:`piconv.usage`. Parses, calls the library, prints what it returns."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from ..cliparse import UsageParser, help_formatter, one_shot
from ..errors import UsageError

LIST_EPILOG = """examples:
  piconv list                          pi's sessions, newest first
  piconv list --project '*pi-mono*' --since 7d
  piconv list ~/.omp/agent/sessions --json
"""

STATS_EPILOG = """examples:
  piconv stats                         tokens and cost by day, pi's sessions
  piconv stats --by month --by model   by month and model
  piconv stats --by session --since yesterday --csv
  piconv stats --archive archive/      from a --to sqlite archive (fast)
  piconv stats session.jsonl --by model
"""


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--project", metavar="GLOB", help="only sessions of projects matching GLOB (name, cwd or folder)"
    )
    p.add_argument("--since", metavar="DATE", help="from DATE on (YYYY[-MM[-DD]], today, yesterday, 7d, 2w)")
    p.add_argument("--until", metavar="DATE", help="up to DATE, inclusive (same forms)")
    p.add_argument("--json", action="store_true", help="as JSON")
    p.add_argument(
        "--recursive",
        action="store_true",
        help="every *.jsonl below the directory, not only where pi keeps sessions",
    )
    p.add_argument("--omp", action="store_true", help="Oh-My-Pi's session directory (~/.omp/agent/sessions)")
    p.add_argument(
        "--jobs", "-j", type=int, metavar="N", help="processes reading the sessions (default: the cores)"
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")


def _parser_list() -> UsageParser:
    p = UsageParser(
        prog="piconv list",
        description="The sessions of a directory (default: pi's own), newest first, with forks and "
        "subagents under the session they came from.",
        epilog=LIST_EPILOG,
        formatter_class=help_formatter,
    )
    p.add_argument("directory", nargs="?", metavar="DIR", help="a directory of sessions (default: pi's)")
    _common(p)
    return p


def _parser_stats() -> UsageParser:
    p = UsageParser(
        prog="piconv stats",
        description="Tokens (input, output, cache read, cache write) and cost, grouped. Each entry a fork "
        "copied from its parent is counted once.",
        epilog=STATS_EPILOG,
        formatter_class=help_formatter,
    )
    p.add_argument(
        "inputs",
        nargs="*",
        metavar="DIR|FILE",
        help="a directory of sessions (default: pi's) or session files",
    )
    p.add_argument(
        "--by",
        action="append",
        metavar="GROUP",
        help="day, week, month, project, model or session; repeat or comma-separate to combine (default: day)",
    )
    p.add_argument("--csv", action="store_true", help="as CSV")
    p.add_argument(
        "--archive",
        metavar="PATH",
        help="read an archive written with --to sqlite (the file or its directory)",
    )
    p.add_argument(
        "--timezone",
        "--tz",
        metavar="ZONE",
        help="days in ZONE: UTC (default), local, or a name like Europe/Paris",
    )
    _common(p)
    return p


def list_main(args: Sequence[str]) -> int:
    ns = _parser_list().parse_args(args)
    one_shot()
    from ..bulk.select import parse_date
    from .listing import sessions
    from .usage import Selection, project_matches

    catalog = sessions(ns.directory, recursive=ns.recursive, omp=True if ns.omp else None, jobs=ns.jobs)
    selection = Selection(
        parse_date(ns.since, "--since") if ns.since else None,
        parse_date(ns.until, "--until") if ns.until else None,
        ns.project,
    )
    chosen = []
    for session, depth in catalog.nested():
        if selection.project and not project_matches(selection.project, session):
            continue
        if (
            selection.since
            and (session.updated or session.created or "")[: len(selection.since)] < selection.since
        ):
            continue
        if (
            selection.until
            and (session.created or session.updated or "")[: len(selection.until)] > selection.until
        ):
            continue
        chosen.append((session, depth))
    if ns.json:
        from ..jsonio import dumps

        value = {
            "directory": catalog.directory,
            "sessions": [{**s.to_json(), "depth": d} for s, d in chosen],
            "passed": [{"rel": p.rel, "code": p.code, "message": p.message} for p in catalog.passed],
        }
        sys.stdout.buffer.write(dumps(value, indent=True) + b"\n")
        return 0
    from .render import session_table

    sys.stdout.write(session_table(chosen, catalog))
    return 0


def stats_main(args: Sequence[str]) -> int:
    ns = _parser_stats().parse_args(args)
    one_shot()
    from .usage import usage

    if ns.json and ns.csv:
        raise UsageError("--json and --csv: choose one")
    by = [part.strip() for value in ns.by or ["day"] for part in value.split(",") if part.strip()]
    if ns.archive and ns.inputs:
        raise UsageError("--archive reads the archive instead of sessions: name no DIR or FILE with it")
    source: Any = None
    if ns.inputs:
        import os

        ns.inputs = [p if os.path.exists(p) else resolve_input(p, ns.omp) for p in ns.inputs]
    if len(ns.inputs) == 1:
        source = ns.inputs[0]
    elif ns.inputs:
        import os

        for path in ns.inputs:
            if not os.path.isfile(path):
                raise UsageError(f"{path}: several inputs must all be session files")
        source = list(ns.inputs)
    result = usage(
        source,
        by=by,
        since=ns.since,
        until=ns.until,
        project=ns.project,
        timezone=ns.timezone,
        archive=ns.archive,
        recursive=ns.recursive,
        omp=True if ns.omp else None,
        jobs=ns.jobs,
    )
    from .render import usage_csv, usage_table

    if ns.json:
        from ..jsonio import dumps

        sys.stdout.buffer.write(dumps(result.to_json(), indent=True) + b"\n")
    elif ns.csv:
        sys.stdout.write(usage_csv(result))
    else:
        sys.stdout.write(usage_table(result))
    return 0


def resolve_input(name: str, omp: bool = False) -> str:
    """The session file a name given as input means: the file itself, else the session of
    pi's session directory whose id or file name begins with it
    (:func:`piconv.catalog.find.find_session`)."""
    from ..bulk.select import pi_sessions_dir
    from ..errors import InputError
    from .find import find_session

    try:
        return find_session(name, pi_sessions_dir(omp=True if omp else None))
    except InputError as exc:
        if name.isalpha():  # a bare word: perhaps meant as a command
            from ..cliparse import COMMANDS

            raise InputError(f"{exc} (piconv's commands: {', '.join(COMMANDS)})") from None
        raise


def latest_input(omp: bool = False) -> str:
    """``--latest``: the newest session of the current directory's project."""
    from ..bulk.select import pi_sessions_dir
    from .find import latest_session

    return latest_session(directory=pi_sessions_dir(omp=True if omp else None))
