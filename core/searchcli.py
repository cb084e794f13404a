"""``piconv search QUERY [ARCHIVE]``: full-text search of an archive database.

Thin, like the rest of the command line: the archive format's own ``search`` (for
``sqlite``, :mod:`piconv.converters.sqlite.search`, reached through the registry) does
the work; this prints its hits.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from .errors import PluginError, UsageError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see piconv search --help)")


def _parser() -> _Parser:
    p = _Parser(
        prog="piconv search",
        description="Full-text search of an archive a directory run wrote with --to sqlite. "
        'QUERY is FTS5 syntax: words, "a phrase", prefix*, AND / OR / NOT, NEAR(a b, 5).',
    )
    p.add_argument("query", metavar="QUERY")
    p.add_argument(
        "archive",
        metavar="ARCHIVE",
        nargs="?",
        default=".",
        help="the database, or the directory holding archive.db (default: the current directory)",
    )
    p.add_argument("--project", metavar="GLOB", help="only sessions whose project name or cwd matches GLOB")
    p.add_argument("--since", metavar="DATE", help="only entries on or after DATE (YYYY[-MM[-DD[THH:MM]]])")
    p.add_argument("--until", metavar="DATE", help="only entries on or before DATE (inclusive)")
    p.add_argument(
        "--role", metavar="ROLE", help="only entries of this role (user, assistant, tool, shell...)"
    )
    p.add_argument(
        "--model", metavar="MODEL", help="only sessions that used a model whose name contains MODEL"
    )
    p.add_argument("--limit", "-n", type=int, default=20, metavar="N", help="at most N hits (default 20)")
    p.add_argument("--json", action="store_true", help="the hits as JSON")
    p.add_argument("--format", default="sqlite", metavar="FORMAT", help=argparse.SUPPRESS)
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def search(
    archive: str, query: str, filters: dict[str, Any], limit: int = 20, fmt: str = "sqlite"
) -> list[dict[str, Any]]:
    """The hits of ``query`` in ``archive``, by the archive format ``fmt``."""
    from .api import get_format

    conv = get_format(fmt)
    if conv.archive is None:
        raise PluginError(f"format {conv.name!r} writes no archive that can be searched")
    return conv.archive.search(archive, query, filters, limit)


def main(args: Sequence[str]) -> int:
    from .bulk.select import parse_date
    from .terminal import shown

    ns = _parser().parse_args(args)
    if ns.limit < 1:
        raise UsageError("--limit must be at least 1")
    filters = {
        "project": ns.project,
        "since": parse_date(ns.since, "--since") if ns.since else None,
        "until": parse_date(ns.until, "--until") if ns.until else None,
        "role": ns.role,
        "model": ns.model,
    }
    hits = search(ns.archive, ns.query, filters, ns.limit, ns.format)
    if ns.json:
        from .jsonio import dumps

        sys.stdout.buffer.write(dumps({"query": ns.query, "hits": hits}, indent=True) + b"\n")
        return 0
    if not hits:
        print(f"piconv: no matches for {shown(ns.query)}", file=sys.stderr)
        return 0
    out = []
    for n, hit in enumerate(hits, 1):
        date = (hit["timestamp"] or hit["session_created"] or "")[:16].replace("T", " ")
        out.append(f"{n}. {hit['title'] or hit['session']}  [{hit['project']}]  {date}")
        where = hit["link"] or hit["session"]
        out.append(f"   entry {hit['entry']} ({hit['role'] or hit['kind']})  {where}")
        out.append("   " + " ".join((hit["snippet"] or "").split()))
    sys.stdout.write("\n".join(shown(line) for line in out) + "\n")
    return 0
