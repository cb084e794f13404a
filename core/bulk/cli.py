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
