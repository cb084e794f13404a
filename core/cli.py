"""The command line. Thin: parse arguments, call the library, map errors to exit codes.

Exit codes: 0 success (problems in the input are reported, not fatal), 1 a directory run
in which some sessions failed, 2 usage, 3 unreadable input, 4 unknown format or plugin
error, 5 output failed validation, 6 the output cannot be written, 70 an internal error
(:data:`piconv.errors.INTERNAL_ERROR`).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from .cliparse import COMMANDS, UsageParser, add_format_options, help_formatter, one_shot, own_process
from .errors import PiconvError, UsageError
from .version import __version__

SUBCOMMANDS = ("list", "stats", "search", "inspect", "validate", "diff", "share", "help")

DESCRIPTION = """\
Convert pi coding-agent session files (JSONL) into other formats.

  piconv SESSION --to FORMAT [-o OUT] [--open]  convert one session ('-' reads stdin)
  piconv --latest --to FORMAT                   the newest session of this directory's project
  piconv FILE -f FORMAT --to FORMAT             name the input format (default: detected)
  piconv SESSIONS_DIR --to FORMAT -o OUTDIR     convert every session below a directory
  piconv list [DIR]                             the sessions, newest first
  piconv stats [DIR|FILE...] [--by GROUP]       tokens and cost by day, week, month, project, model, session
  piconv search QUERY [ARCHIVE]                 full-text search of a --to sqlite archive
  piconv inspect SESSION [--json] [--context [--leaf ID]]
  piconv validate FILE [-f FORMAT]              check a file against a format's schema
  piconv diff SESSION --leaf A --against B      two branches compared (or two sessions)
  piconv watch SESSIONS_DIR --to FORMAT -o OUTDIR   a directory run kept current as pi writes
  piconv share SESSION [--dry-run]              one redacted page, uploaded as a secret gist (gh)
  piconv help [COMMAND]                         what each command does
  piconv --list-formats | --list-plugins

SESSION is a file, or a session of pi's session directory named by a unique beginning of
its id or of its file name (piconv 01a22b31 --to html).

Formats come from plugins; `piconv --list-formats` shows the input formats (readers) and
the output formats (writers), and `piconv --help-format NAME` shows a format's own options.
"""

EPILOG = """examples:
  piconv session.jsonl --to markdown -o session.md
  piconv 01a22b31 --to html -o s.html --open
  piconv --latest --to markdown
  piconv list --since 7d
  piconv stats --by month --by model
  piconv session.jsonl --to openai --leaf 3f2a9c1d
  piconv session.asf.jsonl --to markdown         (an ASF file: the reader is detected)
  piconv ~/.pi/agent/sessions --to html --to markdown -o archive/ --jobs 4
  piconv --to html --to sqlite -o archive/ --since 2026-01   (no input: pi's session directory)
  piconv search 'NEAR(sqlite index, 5)' archive/ --role assistant
  piconv session.jsonl --to html --detail conversation -o share.html   (no tool calls or output)
  piconv share session.jsonl --detail calls     (redacted; asks before uploading)

exit codes:
  0  done (problems in the input are reported, not fatal)
  1  a directory run in which some sessions failed (the others are written)
  2  usage
  3  unreadable input, or no reader recognises it (name one with --from)
  4  unknown format or plugin error
  5  the output failed validation
  6  the output cannot be written where asked
  7  share: the file is written but not uploaded (no gh, not logged in, gh failed, not confirmed)
  70 internal error: a bug in piconv or a plugin (--debug shows the traceback)
"""


def _version_line() -> str:
    return f"piconv {__version__}"


WATCH_DESCRIPTION = """\
Keep a directory run (or one session's output) current while pi writes: each change
converts what changed and rewrites the index and the archive, within about a second.
Ctrl-C ends the watch with one plain run, so OUTDIR is what a plain run leaves.

  piconv watch SESSIONS_DIR --to html --to sqlite -o OUTDIR
  piconv watch --to html -o OUTDIR                  (no input: pi's session directory)
  piconv watch SESSION.jsonl --to html -o page.html --open

Every option of a directory run (or of one conversion) applies; see docs/watch.md.
"""


def _main_parser(watching: bool = False) -> UsageParser:
    if watching:
        p = UsageParser(prog="piconv watch", description=WATCH_DESCRIPTION, formatter_class=help_formatter)
    else:
        p = UsageParser(prog="piconv", description=DESCRIPTION, epilog=EPILOG, formatter_class=help_formatter)
    p.add_argument(
        "input",
        nargs="?",
        help="session file, '-' for stdin, or a directory of sessions (with -o and none given: pi's session directory)",
    )
    p.add_argument(
        "--to",
        "-t",
        dest="to",
        action="append",
        metavar="FORMAT",
        help="output format (repeatable for a directory)",
    )
    p.add_argument(
        "--from",
        "-f",
        dest="from_",
        metavar="FORMAT",
        help="input format (default: detected from the first bytes; see --list-formats)",
    )
    p.add_argument(
        "--latest",
        action="store_true",
        help="the newest session of the current directory's project (what pi --continue resumes)",
    )
    p.add_argument(
        "--open",
        action="store_true",
        help="open the written file in its viewer (a browser for HTML; a directory run: its index; "
        "watch: one session's page, once); not for stdout, never without a display",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="output file, '-' for stdout (a directory for a directory input); its extension names the format "
        "when --to is not given; default stdout",
    )
    p.add_argument(
        "--leaf",
        metavar="ID",
        help="convert the branch ending at this entry (an id, a unique id prefix or a label) instead of the file's leaf",
    )
    p.add_argument("--report", metavar="FILE", help="write the loss report as JSON to FILE ('-' for stderr)")
    p.add_argument("--no-validate", action="store_true", help="skip validating the output")
    p.add_argument(
        "--recover-glued",
        action="store_true",
        help="recover both objects of two JSON objects glued on one line",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no summary line or progress on stderr")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.add_argument(
        "--list-formats",
        action="store_true",
        help="list the input formats (readers) and output formats (writers)",
    )
    p.add_argument("--list-plugins", action="store_true", help="list the loaded plugins and their hooks")
    p.add_argument("--json", action="store_true", help="with --list-formats / --list-plugins: as JSON")
    p.add_argument("--help-format", metavar="NAME", help="show the options of one format")
    p.add_argument("--version", action="version", version=_version_line())
    from .detail.cli import add_arguments as add_detail
    from .redaction.cli import add_arguments

    add_detail(p)
    add_arguments(p)
    bulk = p.add_argument_group("directory input")
    bulk.add_argument(
        "--jobs",
        "-j",
        type=int,
        metavar="N",
        help="worker processes for a directory input, one session each (default: the cores this "
        "process may use); one session is always converted in one process",
    )
    bulk.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        # the default lives in piconv.bulk.timelimit, not imported here: a single
        # conversion must not pay for importing the bulk package
        help="for a directory input: a session not converted within this time fails (bulk:timeout) "
        "and the run goes on (default 900; 0: no limit)",
    )
    bulk.add_argument(
        "--force",
        action="store_true",
        help="reconvert every session, even those up to date",
    )
    bulk.add_argument(
        "--overwrite",
        action="store_true",
        help="replace files at output places that piconv did not write (by default they are left, "
        "and that output fails with bulk:output-exists)",
    )
    bulk.add_argument(
        "--executor", choices=("local", "dask"), default="local", help="where the per-file tasks run"
    )
    bulk.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="with --executor dask: the scheduler address (default: $DASK_SCHEDULER_ADDRESS)",
    )
    bulk.add_argument(
        "--since", metavar="DATE", help="only sessions active on or after DATE (YYYY[-MM[-DD]])"
    )
    bulk.add_argument(
        "--until", metavar="DATE", help="only sessions begun on or before DATE (YYYY[-MM[-DD]])"
    )
    bulk.add_argument(
        "--project", metavar="GLOB", help="only sessions of projects matching GLOB (folder, name or cwd)"
    )
    bulk.add_argument(
        "--recursive",
        action="store_true",
        help="every *.jsonl below the directory, not only where pi keeps sessions (PROJECT/*.jsonl)",
    )
    bulk.add_argument(
        "--omp",
        action="store_true",
        help="with no input: Oh-My-Pi's session directory (~/.omp/agent/sessions) instead of pi's",
    )
    if watching:
        follow = p.add_argument_group("watch")
        follow.add_argument(
            "--quiet-period",
            type=float,
            metavar="SECONDS",
            help="a last line still incomplete this long is converted as it is (default 2)",
        )
        follow.add_argument(
            "--poll", action="store_true", help="poll the files instead of the system's file events"
        )
    return p


def run() -> None:
    """The console entry point."""
    own_process()
    # A session's text, a file name that is not UTF-8 or a lone surrogate escape must
    # never make printing fail: such characters are shown escaped.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away: what was asked for is done
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(code)


def _say(line: str) -> None:
    """One line on stderr; what a file name or a session put in it cannot drive the
    terminal (control characters are written as escapes)."""
    from .terminal import shown

    print(shown(line), file=sys.stderr)


def _show_warning(message: Any, category: type[Warning], *rest: Any, **kw: Any) -> None:
    _say(f"piconv: warning: {message}")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:  # answered before anything is imported
        print(_version_line())
        return 0
    debug = "--debug" in args
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            if args and args[0] == "help":
                return _help(args[1:])
            if args and args[0] in SUBCOMMANDS:
                from .clicommands import subcommand

                return subcommand(args[0], args[1:])
            if args and args[0] == "watch":
                return _convert(args[1:], watching=True)
            if args and _mistyped(args[0]):
                raise UsageError(_unknown_command(args[0]))
            return _convert(args)
    except PiconvError as exc:
        if debug:
            raise
        _say(f"piconv: error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        print("piconv: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # the last line of defence: one clear line, no traceback
        if debug:
            raise
        from .errors import INTERNAL_ERROR

        _say(f"piconv: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)")
        return INTERNAL_ERROR


def _help(args: list[str]) -> int:
    """``piconv help [COMMAND]``: what exists, or one command's options."""
    if args and args[0] in SUBCOMMANDS and args[0] != "help":
        return main([args[0], "--help"])
    if args and args[0] not in ("convert", "--help", "-h"):
        raise UsageError(_unknown_command(args[0]))
    if args:
        return main(["--help"])
    lines = ["usage: piconv COMMAND [OPTIONS]   or   piconv SESSION --to FORMAT [-o OUT]", "", "commands:"]
    lines += [f"  {name:<10}{what}" for name, what in COMMANDS.items()]
    lines += [
        "",
        "converting: piconv SESSION --to FORMAT, piconv DIR --to FORMAT -o OUTDIR (piconv --help for every option;",
        "piconv --list-formats for the formats)",
    ]
    print("\n".join(lines))
    return 0


def _mistyped(word: str) -> bool:
    """Whether ``word``, in a command's place, is a mistyped command: a bare word (no path,
    no session id: letters only) that is no file and is close to a command's name."""
    if not word.isalpha() or os.path.exists(word):
        return False
    import difflib

    return bool(difflib.get_close_matches(word, SUBCOMMANDS, n=1, cutoff=0.6))


def _unknown_command(word: str) -> str:
    import difflib

    close = difflib.get_close_matches(word, SUBCOMMANDS, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"no command {word!r}: {hint}the commands are {', '.join(COMMANDS)} (piconv help)"


def _convert(args: list[str], watching: bool = False) -> int:
    wants_help = "-h" in args or "--help" in args
    parser = _main_parser(watching)
    if wants_help and not any(a.startswith("--help-format") for a in args):
        parser.print_help()
        return 0
    from . import api

    # Only the formats asked for lend their options, so a conversion to a built-in
    # format never loads the third-party plugins (an unknown name loads them).
    known, _rest = parser.parse_known_args(args)
    inferred = _inferred_format(known)
    wanted = [api.get_format(name) for name in known.to or inferred]
    dests = add_format_options(parser, wanted)
    ns = parser.parse_args(args)
    if ns.help_format:
        from .clicommands import help_format

        return help_format(ns.help_format)
    if ns.list_formats:
        from .clicommands import list_formats

        return list_formats(ns.json)
    if ns.list_plugins:
        from .clicommands import list_plugins

        return list_plugins(ns.json)
    if ns.latest:
        if ns.input is not None:
            raise UsageError("--latest picks the session itself: name no input with it")
        from .catalog.cli import latest_input

        ns.input = latest_input(ns.omp)
        if not ns.quiet:
            _say(f"piconv: the latest session of this directory's project: {ns.input}")
    elif ns.input not in (None, "-") and not os.path.exists(ns.input):
        from .catalog.cli import resolve_input

        ns.input = resolve_input(ns.input, ns.omp)
    if ns.input is None and ns.to and ns.output:
        from .bulk.select import pi_sessions_dir

        # no input: pi's own session directory (Oh-My-Pi's with --omp, or when only it exists)
        ns.input = pi_sessions_dir(omp=True if ns.omp else None)
        if not os.path.isdir(ns.input):
            whose = "Oh-My-Pi's" if ns.omp else "pi's"
            raise UsageError(f"no input given, and {whose} session directory {ns.input} does not exist")
    if ns.input is None:
        raise UsageError("no input given (see piconv --help)")
    if _same_file(ns.report, ns.output):
        raise UsageError(f"--report and -o both name {ns.output}: the report would replace the output")
    ns.to = ns.to or inferred
    if not ns.to:
        raise UsageError(
            "no output format given: add --to FORMAT, or -o FILE with a format's extension (see piconv --list-formats)"
        )
    if watching:
        from .bulk.cli import watch_main

        return watch_main(ns, dests)
    if ns.input != "-" and os.path.isdir(ns.input):
        if ns.from_ is not None:
            raise UsageError("--from applies to one input; each file of a directory is detected on its own")
        from .bulk.cli import run_directory

        code = run_directory(ns, dests)
        if ns.open:
            _open_index(ns)
        return code
    if len(ns.to) > 1:
        raise UsageError("several --to formats need a directory input")
    for flag, value in (
        ("--jobs", ns.jobs),
        ("--executor", ns.executor != "local"),
        ("--scheduler", ns.scheduler),
        ("--since", ns.since),
        ("--until", ns.until),
        ("--project", ns.project),
        ("--recursive", ns.recursive),
    ):
        if value:
            raise UsageError(f"{flag} applies to a directory input; one session is converted in one process")
    return _convert_one(ns, dests)


def _same_file(report: str | None, output: str | None) -> bool:
    """Whether ``--report`` and ``-o`` name one file (``-`` is a stream of each its own)."""
    if not report or not output or report == "-" or output == "-":
        return False
    try:
        return os.path.samefile(report, output)
    except OSError:  # one of them does not exist yet: the same path then
        return os.path.realpath(report) == os.path.realpath(output)


def _inferred_format(known: argparse.Namespace) -> list[str]:
    """``-o out.md`` without ``--to``: the one format that claims the extension (as
    pandoc does); nothing to infer from a directory run, stdout or a listing."""
    output, source = known.output, known.input
    if known.to or not output or output == "-" or source is None:
        return []
    if known.list_formats or known.list_plugins or known.help_format:
        return []
    if source != "-" and os.path.isdir(source):
        return []
    from .api import format_for_path

    return [format_for_path(output).name]


def _convert_one(ns: argparse.Namespace, dests: dict[str, set[str]]) -> int:
    one_shot()
    from .api import convert, get_format, load
    from .cliparse import filter_steps

    converter = get_format(ns.to[0])
    options = {d: getattr(ns, d) for d in dests.get(converter.name, ())}
    options["leaf"] = ns.leaf
    steps = filter_steps(ns)
    source = load(
        ns.input, recover_glued=ns.recover_glued, reader=ns.from_, keep_source=converter.source_lines
    )
    out: Any = ns.output if ns.output not in (None, "-") else sys.stdout.buffer
    report = convert(
        source,
        converter.name,
        out,
        options,
        validate=not ns.no_validate,
        recover_glued=ns.recover_glued,
        reader=ns.from_,
        filters=steps,
    )
    if ns.report:
        from .reportfile import write_report

        write_report(ns.report, report.to_json(), ns.input)
    if not ns.quiet:
        _say(f"piconv: {report.summary()}")
    if ns.open:
        _open_written(None if out is sys.stdout.buffer else ns.output)
    return 0


def _open_written(path: str | None) -> None:
    """``--open``: the written file in the user's viewer, never stdout, never without a display."""
    from .cliparse import open_in_viewer

    note = open_in_viewer(path)
    if note:
        _say(f"piconv: --open: {note}")


def _open_index(ns: argparse.Namespace) -> None:
    """``--open`` after a directory run: its HTML index, else its Markdown one."""
    for name in ("index.html", "index.md"):
        path = os.path.join(ns.output, name)
        if os.path.isfile(path):
            _open_written(path)
            return
    _say("piconv: --open: the run wrote no index page to open (--to html or --to markdown writes one)")
