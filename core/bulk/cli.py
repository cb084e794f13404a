"""``piconv DIR --to FORMAT... -o OUTDIR``: the command-line face of :func:`run_bulk`."""

from __future__ import annotations

import argparse
import sys

from ..errors import UsageError


def run_directory(ns: argparse.Namespace, dests: dict[str, set[str]]) -> int:
    """Run a bulk conversion from the parsed arguments; 0 when every file converted
    (or was up to date), 1 (``SOME_FAILED``) when anything failed."""
    from ..api import get_format
    from .runner import run_bulk
    from .timelimit import DEFAULT_SECONDS

    if not ns.output:
        raise UsageError("a directory input needs -o OUTDIR (see docs/bulk.md)")
    if ns.output == "-":
        raise UsageError("a directory input cannot be written to stdout: give -o OUTDIR")
    if ns.leaf is not None:
        raise UsageError("--leaf names an entry of one session; it cannot apply to a directory")
    if ns.executor != "dask" and ns.scheduler:
        raise UsageError("--scheduler needs --executor dask")
    from ..cliparse import filter_steps

    steps = filter_steps(ns)
    from .select import Selection, parse_date

    selection = Selection(
        parse_date(ns.since, "--since") if ns.since else None,
        parse_date(ns.until, "--until") if ns.until else None,
        ns.project or None,
    )
    options = {}
    for name in ns.to:
        conv = get_format(name)
        options[conv.name] = {d: getattr(ns, d, None) for d in sorted(dests.get(conv.name, ()))}
    summary = run_bulk(
        ns.input,
        ns.output,
        ns.to,
        options=options,
        jobs=ns.jobs,
        timeout=DEFAULT_SECONDS if ns.timeout is None else ns.timeout,
        force=ns.force,
        overwrite=ns.overwrite,
        executor=ns.executor,
        scheduler=ns.scheduler,
        validate=not ns.no_validate,
        recover_glued=ns.recover_glued,
        quiet=ns.quiet,
        filters=steps,
        selection=selection,
        recursive=ns.recursive,
    )
    if ns.report:
        from ..reportfile import write_report

        write_report(ns.report, summary.to_json(), ns.input)
    if not ns.quiet:
        sys.stderr.write(summary.render())
    if summary.fatal:
        from ..errors import OutputError
        from ..terminal import shown

        # after the summary, so the last line says why the run stopped
        sys.stderr.write(f"piconv: error: {shown(summary.fatal)}\n")
        return OutputError.exit_code
    from ..errors import SOME_FAILED

    return 0 if summary.ok else SOME_FAILED


def watch_main(ns: argparse.Namespace, dests: dict[str, set[str]]) -> int:
    """``piconv watch``: a directory run, or one session's conversion, kept current until
    Ctrl-C (:func:`piconv.bulk.watch.watch`). Ctrl-C asks the watch to stop after the run
    under way; a second one stops at once."""
    import os
    import signal
    import threading

    from ..api import get_format
    from ..redaction.cli import redaction_steps
    from ..terminal import shown
    from .follow import QUIET_SECONDS, WatchRun
    from .watch import watch

    if not ns.output or ns.output == "-":
        raise UsageError(
            "piconv watch writes files it keeps current: give -o (OUTDIR, or a file for one session)"
        )
    if ns.input == "-":
        raise UsageError("piconv watch follows a file or a directory, not standard input")
    if not os.path.exists(ns.input):
        from ..errors import InputError

        raise InputError("no such file or directory", path=ns.input)
    directory = os.path.isdir(ns.input)
    if directory and ns.leaf is not None:
        raise UsageError("--leaf names an entry of one session; it cannot apply to a directory")
    if ns.open and directory:
        raise UsageError(
            "--open takes one session (piconv watch SESSION.jsonl --to html -o page.html --open)"
        )
    if not directory:
        for flag, value in (
            ("--jobs", ns.jobs),
            ("--since", ns.since),
            ("--until", ns.until),
            ("--project", ns.project),
        ):
            if value:
                raise UsageError(f"{flag} applies to a directory; one session is converted in one process")
        if len(ns.to) != 1:
            raise UsageError("one session is kept current in one format: give one --to")
    if ns.executor != "local":
        raise UsageError("piconv watch converts on this machine (--executor local)")
    if ns.quiet_period is not None and not ns.quiet_period >= 0:
        raise UsageError("--quiet-period must be a number of seconds")
    options = {}
    for name in ns.to:
        conv = get_format(name)
        options[conv.name] = {d: getattr(ns, d, None) for d in sorted(dests.get(conv.name, ()))}
        if not directory:
            options[conv.name]["leaf"] = ns.leaf
    selection = None
    if directory:
        from .select import Selection, parse_date

        selection = Selection(
            parse_date(ns.since, "--since") if ns.since else None,
            parse_date(ns.until, "--until") if ns.until else None,
            ns.project or None,
        )
    opened = [not ns.open]

    def told(run: WatchRun) -> None:
        if ns.quiet:
            pass
        elif run.summary is not None:
            s = run.summary
            if run.final:
                what = "stopped, last plain run"
            elif run.changed:
                what = "changed: " + ", ".join(run.changed)
            else:
                what = "first run"
            line = f"piconv: watch: {what}: {s.converted} converted, {s.failed + s.refused} failed ({run.seconds:.2f} s)"
            if run.held:
                line += f"; waiting for the last line of {', '.join(run.held)}"
            sys.stderr.write(shown(line) + "\n")
            for f in s.failures[:5]:
                sys.stderr.write(shown(f"piconv:   {f['input']}: {f['code']}: {f['message']}") + "\n")
        else:
            said = f"failed: {run.error}" if run.error else "written"
            sys.stderr.write(shown(f"piconv: watch: {ns.output} {said} ({run.seconds:.2f} s)") + "\n")
        if not opened[0] and run.error is None:
            opened[0] = True
            _open_page(ns.output)

    stop = threading.Event()
    previous = signal.getsignal(signal.SIGINT)

    def interrupted(signum: int, frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt  # a second Ctrl-C: stop now
        stop.set()
        if not ns.quiet:
            sys.stderr.write(
                "piconv: watch: stopping after a last plain run (Ctrl-C again to stop at once)\n"
            )

    signal.signal(signal.SIGINT, interrupted)
    if not ns.quiet:
        sys.stderr.write(shown(f"piconv: watching {ns.input} (Ctrl-C to stop)") + "\n")
    try:
        last = watch(
            ns.input,
            ns.output,
            ns.to,
            stop=stop,
            on_run=told,
            quiet_seconds=QUIET_SECONDS if ns.quiet_period is None else ns.quiet_period,
            options=options,
            jobs=ns.jobs,
            timeout=ns.timeout,
            validate=not ns.no_validate,
            recover_glued=ns.recover_glued,
            filters=redaction_steps(ns),
            selection=selection,
            recursive=ns.recursive,
            overwrite=ns.overwrite,
            force_polling=True if ns.poll else None,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    if ns.report and last.summary is not None:
        from ..reportfile import write_report

        write_report(ns.report, last.summary.to_json(), ns.input)  # the last plain run's
    if last.summary is not None:
        from ..errors import SOME_FAILED

        return 0 if last.summary.ok else SOME_FAILED
    return 0 if last.error is None else 1


def _open_page(path: str) -> None:
    """The written page in the user's browser, once; never without a display (a server,
    an SSH session), where it would start a text browser in the terminal or nothing."""
    import os
    import webbrowser
    from pathlib import Path

    from ..terminal import shown

    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        sys.stderr.write(shown(f"piconv: watch: no display to open {path} on; open it yourself") + "\n")
        return
    if not webbrowser.open(Path(path).resolve().as_uri()):
        sys.stderr.write(shown(f"piconv: watch: no browser found to open {path}") + "\n")
