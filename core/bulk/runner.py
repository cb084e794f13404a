"""A bulk run from start to end: discover, plan against the manifest, convert, record, index.

This is the library entry point (:func:`run_bulk`); the command line is a thin layer
over it (:mod:`piconv.bulk.cli`). Each phase's work is a module of its own: the formats
and their identity (:mod:`.formats`), the headers (:mod:`.headers`), planning and naming
(:mod:`.plan`, :mod:`.redactnames`), the records (:mod:`.record`), the archives
(:mod:`.archive`) and the index pages (:mod:`.index`); this one runs them in order. The
parent process alone touches the manifest and the index; workers only read their
session and write its outputs (an archive's share of them included, on this machine: see
:mod:`.archive`).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from .archive import archive_result, close_stores, idle_stores, link_stores, open_stores, release_archives
from .discover import Refused, Source, discover
from .formats import RunFormat, run_formats
from .headers import session_headers
from .lineage import resolve
from .manifest import Manifest, locked
from .plan import Plan, plan
from .progress import Progress
from .record import disk_failure, record_result
from .redactnames import header_redactor, output_namer
from .select import Selection, select
from .sniff import Header
from .summary import Summary
from .timelimit import DEFAULT_SECONDS
from .worker import Task, clean_temps

if TYPE_CHECKING:
    from .cluster import Cluster


def run_bulk(
    input_dir: str,
    output_dir: str,
    formats: Sequence[str],
    *,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    jobs: int | None = None,
    timeout: float | None = DEFAULT_SECONDS,
    force: bool = False,
    overwrite: bool = False,
    executor: str = "local",
    scheduler: str | None = None,
    client: Any = None,
    validate: bool = True,
    recover_glued: bool = False,
    quiet: bool = False,
    progress_stream: TextIO | None = None,
    registry: Any = None,
    filters: Sequence[tuple[str, Mapping[str, Any]]] = (),
    selection: Selection | None = None,
    recursive: bool = False,
    hold: Collection[str] = (),
    watched: Collection[str] = (),
) -> Summary:
    """Convert every session below ``input_dir`` into ``output_dir`` in each of
    ``formats``; see docs/bulk.md. ``options`` maps a format name to its own options.
    ``client`` is a running ``dask.distributed.Client`` (implies ``executor="dask"``).
    ``filters`` (``(name, options)`` steps, as :func:`piconv.apply_filters` takes) run on
    each session before any format; the manifest records them, and a change reconverts.
    ``selection`` converts only the sessions it admits (``--since``, ``--until``, ``--project``).
    The sessions are found as pi finds them (``PROJECT/*.jsonl``, and pi-subagents'
    layouts), or every ``*.jsonl`` below ``input_dir`` with ``recursive``; a file that is
    not a session is passed over and listed (``Summary.skipped``).
    ``force`` converts every session again; ``overwrite`` replaces files at output places
    that piconv did not write (else that output fails, ``bulk:output-exists``).
    ``hold`` and ``watched`` serve ``piconv watch`` (:mod:`.watch`): inputs (paths below
    ``input_dir``, ``/``-separated) to leave as they are this time (a session whose last
    line is still being written: neither converted nor read), and inputs whose outputs
    are written for watching (each format gets the option ``watched``; a later run
    without it writes them again)."""
    from ..registry import get_registry
    from ..version import __version__
    from .executors import default_jobs

    started = time.perf_counter()
    registry = registry or get_registry()
    fmts = run_formats(registry, formats, options or {}, validate, recover_glued, filters)
    for name, _opts in filters:
        registry.get_filter(name)  # an unknown filter fails before anything is written
    if client is not None:
        executor = "dask"
    _check_settings(executor, jobs, timeout)
    real_in, real_out = _real_dirs(input_dir, output_dir)
    # A Dask cluster is reached and checked before OUTDIR is created or locked.
    cluster = _cluster(executor, client, scheduler, registry, fmts, real_in, real_out)
    _make_output_dir(output_dir, cluster)
    n_jobs = jobs or default_jobs()
    summary = Summary(
        real_in, real_out, [f.name for f in fmts], executor, n_jobs if executor == "local" else None
    )

    with contextlib.closing(cluster) if cluster else contextlib.nullcontext(), locked(output_dir):
        summary.temps_removed = clean_temps(real_out)
        manifest = Manifest(real_out)
        summary.manifest_dropped = manifest.dropped
        run = _Run(fmts, real_in, real_out, manifest, summary, open_stores(fmts, real_out, summary))
        try:
            found = _find_sessions(run, recursive=recursive, hold=hold, selection=selection, filters=filters)
            name_of = output_namer(filters)
            work = plan(
                found.sessions,
                manifest,
                fmts,
                real_in,
                real_out,
                version=__version__,
                force=force,
                validate=validate,
                recover_glued=recover_glued,
                timeout=timeout,
                filters=tuple(filters),
                archived={name: store.keys() for name, store in run.stores.items()},
                here=cluster is None,
                overwrite=overwrite,
                present=found.present,
                name_of=name_of,
                watched=frozenset(watched),
            )
            summary.up_to_date = work.up_to_date
            for r in work.refused:
                summary.add_refused(r.rel, r.code, r.message)
            _convert(run, work, found, cluster, n_jobs, progress_stream, quiet, watched, __version__)
            _close_archives_and_write_indexes(run, overwrite, name_of)
        finally:
            close_stores(run.stores, real_out, failed=True)  # those not closed above: an interrupted run
            _compact(manifest, summary)
    summary.seconds = time.perf_counter() - started
    return summary


def _check_settings(executor: str, jobs: int | None, timeout: float | None) -> None:
    from ..errors import UsageError

    if executor not in ("local", "dask"):
        raise UsageError(f"unknown executor {executor!r} (local or dask)")
    if jobs is not None and jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if timeout is not None and not timeout >= 0:
        raise UsageError("--timeout must be a number of seconds, 0 for no limit")


def _real_dirs(input_dir: str, output_dir: str) -> tuple[str, str]:
    """The input and output directories, resolved; they must differ."""
    from ..errors import UsageError

    if not os.path.isdir(input_dir):
        raise UsageError("not a directory", path=input_dir)
    real_in, real_out = os.path.realpath(input_dir), os.path.realpath(output_dir)
    if real_out == real_in:
        raise UsageError("the output directory must not be the input directory", path=output_dir)
    return real_in, real_out


def _cluster(
    executor: str,
    client: Any,
    scheduler: str | None,
    registry: Any,
    fmts: list[RunFormat],
    real_in: str,
    real_out: str,
) -> Cluster | None:
    """The Dask cluster of a ``dask`` run, its workers checked against this client's
    piconv and the plugins of the run's formats; None for a local run."""
    if executor != "dask":
        return None
    from .cluster import connect, facts

    return connect(client, scheduler, facts([f.name for f in fmts], registry), real_in, real_out)


def _make_output_dir(output_dir: str, cluster: Cluster | None) -> None:
    from ..errors import OutputError

    try:
        os.makedirs(output_dir, exist_ok=True)
    except OSError as exc:
        if cluster is not None:
            cluster.close()
        raise OutputError(
            f"cannot create the output directory: {exc.strerror or exc}", path=output_dir
        ) from None


@dataclass(frozen=True, slots=True)
class _Run:
    """What each phase of a run works on once OUTDIR is locked."""

    fmts: list[RunFormat]
    real_in: str
    real_out: str
    manifest: Manifest
    summary: Summary
    stores: dict[str, Any]
    """Each archive format's store, open (:mod:`.archive`); a closed one leaves it."""


@dataclass(frozen=True, slots=True)
class _Found:
    sessions: list[Source]
    """The sessions to plan: found, not held, selected."""
    headers: dict[str, Header]
    refused: list[Refused]
    """Files found but refused: unreadable, not regular files, links out of the input."""
    present: set[str]
    """Every input found, held or selected or not."""


def _find_sessions(
    run: _Run,
    *,
    recursive: bool,
    hold: Collection[str],
    selection: Selection | None,
    filters: Sequence[tuple[str, Mapping[str, Any]]],
) -> _Found:
    """The sessions below the input directory, with their headers, less those ``hold``
    keeps and ``selection`` leaves out; the summary lists the files passed over (not
    sessions) and those refused."""
    manifest, summary = run.manifest, run.summary
    sources, refused, passed_over = discover(run.real_in, exclude=run.real_out, recursive=recursive)
    present = {s.rel for s in sources} | {r.rel for r in refused}
    if hold:
        sources = [s for s in sources if s.rel not in hold]
    sources, headers = session_headers(
        sources, manifest, run.real_in, passed_over, refused, header_redactor(filters)
    )
    for item in passed_over:
        summary.add_skipped(item.rel, item.code, item.message)
    sources, summary.not_selected = select(sources, selection, manifest, headers)
    for r in refused:
        summary.add_refused(r.rel, r.code, r.message)
    return _Found(sources, headers, refused, present)


def _convert(
    run: _Run,
    work: Plan,
    found: _Found,
    cluster: Cluster | None,
    n_jobs: int,
    progress_stream: TextIO | None,
    quiet: bool,
    watched: Collection[str],
    version: str,
) -> None:
    """Run the planned tasks and take in their results, showing progress; the pool is
    shut down and this process's archive connections released however it ends."""
    sizes = {t.rel: s.size for t, s in work.tasks}
    progress = Progress(len(work.tasks), sum(sizes.values()), progress_stream, quiet)
    for r in found.refused + work.refused:
        progress.message(f"refused: {r.rel}: {r.code}: {r.message}")
    idle_stores(run.stores)
    results = _execute(work.tasks, cluster, n_jobs)
    try:
        _collect(run, results, progress, sizes, found.headers, watched, version)
    finally:
        progress.close()
        close = getattr(results, "close", None)
        if close is not None:
            close()  # an interrupted run shuts its pool down before the manifest is compacted
        release_archives(run.fmts)


def _execute(
    tasks: list[tuple[Task, Source]], cluster: Cluster | None, n_jobs: int
) -> Iterator[dict[str, Any]]:
    """The tasks' results as they come, the largest sessions sent first (a pool's last
    tasks are then short ones, and its workers finish together)."""
    from .executors import run_dask, run_inline, run_local

    ordered = [t for t, _s in sorted(tasks, key=lambda ts: (-ts[1].size, ts[1].rel))]
    if cluster is not None:
        return run_dask(ordered, cluster.client, cluster.expected)
    if n_jobs == 1 or len(ordered) <= 1:
        return run_inline(ordered)
    return run_local(ordered, n_jobs)


def _collect(
    run: _Run,
    results: Iterator[dict[str, Any]],
    progress: Progress,
    sizes: Mapping[str, int],
    headers: Mapping[str, Header],
    watched: Collection[str],
    version: str,
) -> None:
    """Each result as it comes: into the archives and the manifest, counted in the
    summary and the progress; the first fatal one (a full disk, a manifest that cannot
    be written) ends the run."""
    manifest, summary = run.manifest, run.summary
    for result in results:
        try:
            archive_result(result, run.stores, run.fmts, manifest)
            record_result(
                result,
                manifest,
                run.fmts,
                summary,
                version,
                headers.get(result["input"]),
                watched=result["input"] in watched,
            )
        except OSError as exc:
            summary.fatal = f"{manifest.path}: cannot write the manifest: {exc.strerror or exc}"
        failed = None
        if result["status"] == "failed":
            first = next(iter(result["errors"].values()))
            failed = f"{result['input']}: {first['code']}: {first['message']}"
            summary.fatal = summary.fatal or disk_failure(result, run.real_out)
        progress.advance(sizes.get(result["input"], 0), failed)
        if summary.fatal:
            break  # every later file would fail the same way: stop, report, keep the manifest whole


def _close_archives_and_write_indexes(run: _Run, overwrite: bool, name_of: Callable[[str], str]) -> None:
    """The run's files over every session: each archive, told which session came from
    which, then closed; each format's index page."""
    from .index import write_indexes

    records, summary = run.manifest.records, run.summary
    links = resolve(records, run.real_in)
    link_stores(run.stores, records, links, summary.notes, name_of)
    summary.archives = close_stores(run.stores, run.real_out, replace_any=overwrite, notes=summary.notes)
    try:
        summary.indexes = write_indexes(
            run.fmts, records.values(), run.real_out, overwrite, summary.notes, links
        )
    except OSError as exc:
        summary.fatal = summary.fatal or f"{run.real_out}: cannot write the index: {exc.strerror or exc}"


def _compact(manifest: Manifest, summary: Summary) -> None:
    try:
        manifest.compact()
    except OSError as exc:  # the log as appended stays: whole lines, read by the next run
        summary.fatal = summary.fatal or f"{manifest.path}: cannot write the manifest: {exc.strerror or exc}"
