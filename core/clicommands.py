"""The commands of the command line other than converting: a format's help, the lists
of formats and plugins, ``inspect``, ``validate`` and ``search``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from .cliparse import UsageParser, add_format_options, one_shot
from .errors import PluginError, UsageError

# Converters name their mapping document as a path of the source tree
# (``docs/formats/asf.md``). The documents under ``docs/`` ship inside the package
# (``piconv/docs/``), so an installed piconv points at its own copy; a checkout points at
# its ``docs/`` folder. Anything else a plugin names (its README, a URL) is left as it is.
_HERE = os.path.dirname(os.path.abspath(__file__))


def locate_doc(doc: str) -> str | None:
    """The file ``doc`` (``docs/...``) names on this machine, or None when it is not one
    of piconv's documents or cannot be found."""
    if not doc.startswith("docs/") or ".." in doc.split("/"):
        return None
    rel = doc.split("/")[1:]
    for base in (
        os.path.join(_HERE, "docs"),  # installed: piconv/docs/
        os.path.join(os.path.dirname(_HERE), "docs"),  # a checkout: core/ beside docs/
    ):
        path = os.path.join(base, *rel)
        if os.path.isfile(path):
            return path
    return None


def shown_doc(doc: str) -> str:
    """``doc`` as a reader can open it: the local file when there is one."""
    return locate_doc(doc) or doc


def help_format(name: str) -> int:
    from .api import get_format

    conv = get_format(name)
    parser = argparse.ArgumentParser(
        prog=f"piconv SESSION --to {conv.name}", description=conv.summary, add_help=False
    )
    add_format_options(parser, [conv])
    parser.print_help()

    print(f"\nmapping document: {shown_doc(conv.mapping_doc)}")
    return 0


def list_formats(as_json: bool) -> int:
    from .api import formats, input_formats

    inputs = [
        {
            "name": r.name,
            "aliases": list(r.aliases),
            "extensions": list(r.extensions),
            "summary": r.summary,
            "plugin": r.plugin,
            "distribution": r.distribution,
            "version": r.version,
            "mapping_doc": r.mapping_doc,
            "mapping_doc_path": locate_doc(r.mapping_doc),
        }
        for r in input_formats()
    ]
    outputs = [
        {
            "name": c.name,
            "aliases": list(c.aliases),
            "extension": c.extension,
            "media_type": c.media_type,
            "summary": c.summary,
            "plugin": c.plugin,
            "distribution": c.distribution,
            "version": c.version,
            "mapping_doc": c.mapping_doc,
            "mapping_doc_path": locate_doc(c.mapping_doc),
            "options": [o.flag for o in c.options],
        }
        for c in formats()
    ]
    if as_json:
        from .jsonio import dumps

        sys.stdout.buffer.write(dumps({"input": inputs, "output": outputs}, indent=True) + b"\n")
        return 0
    for title, rows, ext in (
        ("input formats (--from)", inputs, "extensions"),
        ("output formats (--to)", outputs, "extension"),
    ):
        print(f"{title}:")
        for r in rows:
            alias = f" (alias {', '.join(r['aliases'])})" if r["aliases"] else ""
            shown = ", ".join(r[ext]) if isinstance(r[ext], list) else r[ext]
            print(f"  {r['name']}{alias}  {shown}  {r['summary']}")
            print(
                f"      from {r['plugin']} ({r['distribution']} {r['version']}); mapping: {r['mapping_doc_path'] or r['mapping_doc']}"
            )
    return 0


def list_plugins(as_json: bool) -> int:
    from .api import plugin_failures, plugins

    rows = [
        {
            "name": p.name,
            "distribution": p.distribution,
            "version": p.version,
            "hooks": list(p.hooks),
            "builtin": p.builtin,
        }
        for p in plugins()
    ]
    if as_json:
        from .jsonio import dumps

        sys.stdout.buffer.write(dumps({"plugins": rows, "failures": plugin_failures()}, indent=True) + b"\n")
        return 0
    for r in rows:
        kind = "built-in" if r["builtin"] else "plugin"
        print(
            f"{r['name']}  {r['distribution']} {r['version']}  [{kind}]  hooks: {', '.join(r['hooks']) or '-'}"
        )
    for failure in plugin_failures():
        print(f"failed: {failure}")
    return 0


def subcommand(name: str, args: list[str]) -> int:
    if name == "search":
        return search_main(args)
    if name == "share":
        from .share.cli import main as share_main

        return share_main(args)
    if name == "list":
        from .catalog.cli import list_main

        return list_main(args)
    if name == "stats":
        from .catalog.cli import stats_main

        return stats_main(args)
    if name == "diff":
        from .compare.cli import main

        return main(args)
    if name == "inspect":
        p = UsageParser(
            prog="piconv inspect", description="Show what a session file holds, or its model-visible context."
        )
        p.add_argument(
            "input",
            nargs="?",
            help="session file (or a session's id or file name), '-', or a directory of sessions",
        )
        p.add_argument(
            "--latest", action="store_true", help="the newest session of the current directory's project"
        )
        p.add_argument(
            "--recursive",
            action="store_true",
            help="with a directory: every *.jsonl below it, not only where pi keeps sessions",
        )
        p.add_argument(
            "--from", "-f", dest="from_", metavar="FORMAT", help="input format (default: detected)"
        )
        p.add_argument("--json", action="store_true", help="as JSON")
        p.add_argument(
            "--context", action="store_true", help="print the model-visible context as pi builds it"
        )
        p.add_argument("--leaf", metavar="ID", help="with --context: at this entry instead of the leaf")
        p.add_argument("--recover-glued", action="store_true", help="recover glued JSON objects")
        p.add_argument("--debug", action="store_true", help="show tracebacks")
        ns = p.parse_args(args)
        return _inspect(ns)
    p = UsageParser(
        prog="piconv validate",
        description="Validate a file against a format's schema and checks. The format is told by the "
        "file's name (out.md: markdown) unless -f names it.",
    )
    p.add_argument("file", help="the file to check ('-' for stdin)")
    p.add_argument(
        "--from",
        "-f",
        dest="format",
        metavar="FORMAT",
        help="the format the file is in (default: told by its extension)",
    )
    p.add_argument(
        "--format", dest="format", help=argparse.SUPPRESS
    )  # the name it had before -f meant --from
    p.add_argument(
        "--all",
        action="store_true",
        help=f"every problem (default: the first {PROBLEMS_SHOWN}, then a count)",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    ns = p.parse_args(args)
    return _validate(ns)


def _inspect(ns: argparse.Namespace) -> int:
    one_shot()
    from .api import load_detected
    from .jsonio import dumps

    if ns.latest:
        if ns.input is not None:
            raise UsageError("--latest picks the session itself: name no input with it")
        from .catalog.cli import latest_input

        ns.input = latest_input()
    elif ns.input is None:
        raise UsageError("no input given (a session file, its id, a directory, or --latest)")
    elif ns.input != "-" and not os.path.exists(ns.input):
        from .catalog.cli import resolve_input

        ns.input = resolve_input(ns.input)

    if ns.input != "-" and os.path.isdir(ns.input):
        if ns.context or ns.leaf or ns.from_:
            raise UsageError("--context, --leaf and --from apply to one session, not a directory")
        from .catalog.survey import render_survey, survey

        info = survey(ns.input, recursive=ns.recursive)
        if ns.json:
            sys.stdout.buffer.write(dumps(info, indent=True) + b"\n")
        else:
            sys.stdout.write(render_survey(info))
        return 0
    if ns.recursive:
        raise UsageError("--recursive applies to a directory")

    doc, reader = load_detected(ns.input, recover_glued=ns.recover_glued, reader=ns.from_)
    if ns.context:
        from .leaf import resolve_leaf
        from .pi.context import context_as_pi

        leaf = resolve_leaf(doc, ns.leaf) if ns.leaf is not None else None
        value = context_as_pi(doc, leaf)
        sys.stdout.buffer.write(dumps(value, indent=not ns.json) + b"\n")
        return 0
    from .inspect import render_text, summarize

    info = {"reader": reader.name, **summarize(doc)}
    if ns.json:
        sys.stdout.buffer.write(dumps(info, indent=True) + b"\n")
    else:
        sys.stdout.write(render_text(info))
    return 0


PROBLEMS_SHOWN = 20
"""How many of a file's problems ``piconv validate`` prints before it only counts them."""


def _validate_format(ns: argparse.Namespace) -> Any:
    from .api import format_for_path, formats, get_format

    if ns.format:
        return get_format(ns.format)
    if ns.file == "-":
        raise UsageError("validating stdin needs -f FORMAT")
    try:
        return format_for_path(ns.file)
    except UsageError:
        name = os.path.basename(ns.file).lower()
        claims = [c.name for c in formats() if c.extension and name.endswith(c.extension.lower())]
        why = (
            f"{', '.join(claims)} all write such files"
            if claims
            else "no format writes files named like this"
        )
        raise UsageError(f"{ns.file}: {why}; name its format with -f FORMAT") from None


def _validate(ns: argparse.Namespace) -> int:
    from .errors import InputError, ValidationFailed

    conv = _validate_format(ns)
    if conv.check is None:
        raise UsageError(f"format {conv.name!r} has no checker")
    if ns.file == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            with open(ns.file, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", path=ns.file) from None
    errors = conv.check(data)
    from .terminal import shown

    for err in errors if ns.all else errors[:PROBLEMS_SHOWN]:
        print(shown(f"{ns.file}: {err}"), file=sys.stderr)
    if len(errors) > PROBLEMS_SHOWN and not ns.all:
        more = len(errors) - PROBLEMS_SHOWN
        print(shown(f"{ns.file}: … and {more:,} more problems (--all shows every one)"), file=sys.stderr)
    if errors:
        raise ValidationFailed(f"{len(errors)} problems: not a valid {conv.name} file", path=ns.file)
    print(shown(f"{ns.file}: valid {conv.name}"))
    return 0


class _SearchParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see piconv search --help)")


def _search_parser() -> _SearchParser:
    p = _SearchParser(
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


NO_MATCH = 1
"""``piconv search``'s exit status when nothing matches, as grep's and ripgrep's."""


def _resumable(hit: dict[str, Any]) -> dict[str, Any]:
    """A hit with ``path``, the session file it was found in, and ``resume``, the command
    that resumes that session in pi (``pi --session PATH``), when the archive knows the file."""
    import shlex

    path = hit.get("path")
    return {**hit, "resume": f"pi --session {shlex.quote(path)}" if isinstance(path, str) and path else None}


def search(
    archive: str, query: str, filters: dict[str, Any], limit: int = 20, fmt: str = "sqlite"
) -> list[dict[str, Any]]:
    """The hits of ``query`` in ``archive``, by the archive format ``fmt``."""
    from .api import get_format

    conv = get_format(fmt)
    if conv.archive is None:
        raise PluginError(f"format {conv.name!r} writes no archive that can be searched")
    return conv.archive.search(archive, query, filters, limit)


def search_main(args: Sequence[str]) -> int:
    """``piconv search QUERY [ARCHIVE]``: the archive format's own ``search`` (for
    ``sqlite``, :mod:`piconv.converters.sqlite.search`, reached through the registry) does
    the work; this prints its hits."""
    from .bulk.select import parse_date
    from .terminal import shown

    ns = _search_parser().parse_args(args)
    if ns.limit < 1:
        raise UsageError("--limit must be at least 1")
    filters = {
        "project": ns.project,
        "since": parse_date(ns.since, "--since") if ns.since else None,
        "until": parse_date(ns.until, "--until") if ns.until else None,
        "role": ns.role,
        "model": ns.model,
    }
    hits = [_resumable(hit) for hit in search(ns.archive, ns.query, filters, ns.limit, ns.format)]
    if ns.json:
        from .jsonio import dumps

        sys.stdout.buffer.write(dumps({"query": ns.query, "hits": hits}, indent=True) + b"\n")
        return 0 if hits else NO_MATCH
    if not hits:
        print(f"piconv: no matches for {shown(ns.query)}", file=sys.stderr)
        return NO_MATCH
    out = []
    for n, hit in enumerate(hits, 1):
        date = (hit["timestamp"] or hit["session_created"] or "")[:16].replace("T", " ")
        out.append(f"{n}. {hit['title'] or hit['session']}  [{hit['project']}]  {date}")
        where = hit["link"] or hit["session"]
        out.append(f"   entry {hit['entry']} ({hit['role'] or hit['kind']})  {where}")
        out.append("   " + " ".join((hit["snippet"] or "").split()))
        if hit["resume"]:
            out.append(f"   resume: {hit['resume']}")
    sys.stdout.write("\n".join(shown(line) for line in out) + "\n")
    return 0
