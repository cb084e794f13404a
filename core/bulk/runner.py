"""A bulk run from start to end: discover, plan against the manifest, convert, record, index.

This is the library entry point (:func:`run_bulk`); the command line is a thin layer
over it (:mod:`piconv.bulk.cli`). The parent process alone touches the manifest and the
index; workers only read their session and write its outputs (an archive's share of them
included, on this machine: see :mod:`.archive`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

import orjson

from ..output import plain_file
from .archive import archive_result, close_stores, idle_stores, link_stores, open_stores
from .discover import (
    RESERVED_TOP_LEVEL,
    OutputInInput,
    Refused,
    Skipped,
    Source,
    UnsafePath,
    discover,
    input_guard,
    leaf_rel,
    output_rel,
)
from .lineage import Link, resolve
from .manifest import Manifest, locked, output_links, output_paths
from .progress import Progress
from .select import Selection, select
from .sniff import Header, sniff
from .summary import Summary
from .timelimit import DEFAULT_SECONDS
from .worker import FormatSpec, Task, clean_temps

if TYPE_CHECKING:
    from .cluster import Cluster


@dataclass(frozen=True, slots=True)
class _Format:
    name: str
    extension: str
    tag: str | None
    options: dict[str, Any]
    identity: dict[str, Any]
    """What must be equal for an existing output to count as up to date: the plugin,
    its distribution and version, and a hash of the options it was written with."""
    per_leaf: bool
    archive: Any = None
    """The format's :class:`piconv.registry.Archive` when a directory run writes it as one
    file for the whole archive (a database), else None."""
    index: Any = None
    """The format's :class:`piconv.registry.IndexPage` when it has a page listing the
    run's sessions, else None."""
    watched_identity: dict[str, Any] | None = None
    """The identity of an output written while ``piconv watch`` keeps it current (its
    options with ``watched``): another than a plain run's, so the plain run that ends the
    watch writes that output again, as a plain run writes it."""

    def identity_for(self, watched: bool) -> dict[str, Any]:
        return self.watched_identity if watched and self.watched_identity is not None else self.identity

    def options_for(self, watched: bool) -> dict[str, Any]:
        return {**self.options, WATCHED: True} if watched else self.options


WATCHED = "watched"
"""The option a format gets for a session ``piconv watch`` keeps current (a page may say
so and reload itself while it is watched)."""


def _options_hash(options: Mapping[str, Any], validate: bool, recover_glued: bool) -> str:
    blob = orjson.dumps(
        {"options": dict(options), "validate": validate, "recover_glued": recover_glued},
        option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS,
        default=repr,
    )
    return hashlib.sha256(blob).hexdigest()[:16]


def _filters_identity(filters: Sequence[tuple[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """What the manifest records of the filters (never a secret: their options hashed):
    a change reconverts. The redaction filter names its rule set."""
    out = []
    for name, opts in filters:
        fingerprint = getattr(opts.get("options"), "fingerprint", None)
        if callable(fingerprint):
            from ..redaction.api import rule_set_name

            out.append({"name": name, "rules": rule_set_name(), "fingerprint": fingerprint()})
        else:
            out.append({"name": name, "fingerprint": _options_hash(opts, True, False)})
    return out


def _formats(
    registry: Any,
    names: Sequence[str],
    options: Mapping[str, Mapping[str, Any]],
    validate: bool,
    recover_glued: bool,
    filters: Sequence[tuple[str, Mapping[str, Any]]] = (),
) -> list[_Format]:
    converters: list[Any] = []
    for name in names:
        conv = registry.get(name)  # unknown names raise PluginError before anything is written
        if conv.name not in (c.name for c in converters):
            converters.append(conv)
    out = []
    for conv in converters:
        tag = output_tag(conv)
        opts = dict(options.get(conv.name, {}))
        identity = {
            "plugin": conv.plugin,
            "distribution": conv.distribution,
            "version": conv.version,
            "options": _options_hash(opts, validate, recover_glued),
        }
        if filters:
            identity["filters"] = _filters_identity(filters)
        archive = getattr(conv, "archive", None)
        index = getattr(conv, "index", None)
        watched = {**identity, "options": _options_hash({**opts, WATCHED: True}, validate, recover_glued)}
        out.append(
            _Format(
                conv.name, conv.extension, tag, opts, identity, bool(conv.per_leaf), archive, index, watched
            )
        )
    return out


def output_tag(conv: Any) -> str | None:
    """What goes before a format's extension in its outputs' names: nothing when the
    extension names the format (``.html``, ``.md`` for markdown), else the format's name
    (``a.ir.json``, ``a.asf.jsonl``). It depends on the format alone, never on the other
    formats of a run, so adding or dropping one renames nothing; and no output is named
    ``a.jsonl``, like the session it came from."""
    ext = conv.extension.lstrip(".").lower()
    return None if ext in (conv.name.lower(), *(a.lower() for a in conv.aliases)) else conv.name


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
    from ..errors import OutputError, UsageError
    from ..registry import get_registry
    from ..version import __version__
    from .executors import default_jobs, run_dask, run_inline, run_local

    started = time.perf_counter()
    registry = registry or get_registry()
    fmts = _formats(registry, formats, options or {}, validate, recover_glued, filters)
    for name, _opts in filters:
        registry.get_filter(name)  # an unknown filter fails before anything is written
    if client is not None:
        executor = "dask"
    if executor not in ("local", "dask"):
        raise UsageError(f"unknown executor {executor!r} (local or dask)")
    if jobs is not None and jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if timeout is not None and not timeout >= 0:
        raise UsageError("--timeout must be a number of seconds, 0 for no limit")
    if not os.path.isdir(input_dir):
        raise UsageError("not a directory", path=input_dir)
    real_in, real_out = os.path.realpath(input_dir), os.path.realpath(output_dir)
    if real_out == real_in:
        raise UsageError("the output directory must not be the input directory", path=output_dir)
    # A Dask cluster is reached and checked before OUTDIR is created or locked.
    cluster = _cluster(registry, fmts, client, scheduler, real_in, real_out) if executor == "dask" else None
    try:
        os.makedirs(output_dir, exist_ok=True)
    except OSError as exc:
        _close(cluster)
        raise OutputError(
            f"cannot create the output directory: {exc.strerror or exc}", path=output_dir
        ) from None
    n_jobs = jobs or default_jobs()
    summary = Summary(
        real_in, real_out, [f.name for f in fmts], executor, n_jobs if executor == "local" else None
    )

    with contextlib.closing(cluster) if cluster else contextlib.nullcontext(), locked(output_dir):
        summary.temps_removed = clean_temps(real_out)
        manifest = Manifest(real_out)
        summary.manifest_dropped = manifest.dropped
        stores = open_stores(fmts, real_out, summary)
        try:
            sources, refused, passed_over = discover(real_in, exclude=real_out, recursive=recursive)
            present = {s.rel for s in sources} | {r.rel for r in refused}
            if hold:
                sources = [s for s in sources if s.rel not in hold]
            sources, headers = _headers(
                sources, manifest, real_in, passed_over, refused, _header_redactor(filters)
            )
            for item in passed_over:
                summary.add_skipped(item.rel, item.code, item.message)
            sources, summary.not_selected = select(sources, selection, manifest, headers)
            for r in refused:
                summary.add_refused(r.rel, r.code, r.message)
            archived = {name: store.keys() for name, store in stores.items()}
            name_of = _namer(filters)
            tasks, skipped, unsafe = _plan(
                sources,
                manifest,
                fmts,
                real_in,
                real_out,
                force,
                validate,
                recover_glued,
                __version__,
                timeout,
                tuple(filters),
                archived,
                here=cluster is None,
                overwrite=overwrite,
                present=present,
                name_of=name_of,
                watched=frozenset(watched),
            )
            summary.up_to_date = skipped
            refused += unsafe
            for r in unsafe:
                summary.add_refused(r.rel, r.code, r.message)
            sizes = {t.rel: s.size for t, s in tasks}
            progress = Progress(len(tasks), sum(sizes.values()), progress_stream, quiet)
            for r in refused:
                progress.message(f"refused: {r.rel}: {r.code}: {r.message}")
            ordered = [t for t, _s in sorted(tasks, key=lambda ts: (-ts[1].size, ts[1].rel))]
            idle_stores(stores)
            results: Iterator[dict[str, Any]]
            if cluster is not None:
                results = run_dask(ordered, cluster.client, cluster.expected)
            elif n_jobs == 1 or len(ordered) <= 1:
                results = run_inline(ordered)
            else:
                results = run_local(ordered, n_jobs)
            try:
                for result in results:
                    try:
                        archive_result(result, stores, fmts, manifest)
                        _record(
                            result,
                            manifest,
                            fmts,
                            summary,
                            __version__,
                            headers.get(result["input"]),
                            watched=result["input"] in watched,
                        )
                    except OSError as exc:
                        summary.fatal = f"{manifest.path}: cannot write the manifest: {exc.strerror or exc}"
                    size = sizes.get(result["input"], 0)
                    failed = None
                    if result["status"] == "failed":
                        first = next(iter(result["errors"].values()))
                        failed = f"{result['input']}: {first['code']}: {first['message']}"
                        summary.fatal = summary.fatal or _disk_failure(result, real_out)
                    progress.advance(size, failed)
                    if summary.fatal:
                        break  # every later file would fail the same way: stop, report, keep the manifest whole
            finally:
                progress.close()
                close = getattr(results, "close", None)
                if close is not None:
                    close()  # an interrupted run shuts its pool down before the manifest is compacted
                _release(fmts)
            links = resolve(manifest.records, real_in)
            link_stores(stores, manifest.records, links, summary.notes, name_of)
            summary.archives = close_stores(stores, real_out, replace_any=overwrite, notes=summary.notes)
            try:
                summary.indexes = _write_indexes(manifest, fmts, real_out, overwrite, summary.notes, links)
            except OSError as exc:
                summary.fatal = summary.fatal or f"{real_out}: cannot write the index: {exc.strerror or exc}"
        finally:
            close_stores(stores, real_out, failed=True)  # those not closed above: an interrupted run
            try:
                manifest.compact()
            except OSError as exc:  # the log as appended stays: whole lines, read by the next run
                summary.fatal = (
                    summary.fatal or f"{manifest.path}: cannot write the manifest: {exc.strerror or exc}"
                )
    summary.seconds = time.perf_counter() - started
    return summary


def _redact_options(filters: Sequence[tuple[str, Mapping[str, Any]]]) -> Any:
    """The redaction filter's options, None for its defaults, ``_NONE`` without the filter."""
    options = next((opts.get("options") for name, opts in filters if name == "redact"), _NONE)
    if options is _NONE:
        return _NONE
    from ..redaction.api import RedactOptions

    return options if isinstance(options, RedactOptions) else None


def _namer(filters: Sequence[tuple[str, Mapping[str, Any]]]) -> Callable[[str], str]:
    """How an input's path becomes the names piconv makes of it (outputs' folders, the
    archive's key): as it is, or, with the redaction filter, with what redaction removes
    from a name (:func:`piconv.redaction.api.name_redactor`)."""
    options = _redact_options(filters)
    if options is _NONE:
        return str
    from ..redaction.api import name_redactor

    redact_name = name_redactor(options)
    cache: dict[str, str] = {}

    def redacted(rel: str) -> str:
        if rel not in cache:
            cache[rel] = "/".join(redact_name(part) or "_" for part in rel.split("/"))
        return cache[rel]

    return redacted


_NONE = object()


def _release(fmts: list[_Format]) -> None:
    """Close this process's own connections to the archives (the tasks ``--jobs 1`` ran
    here), so the stores can close theirs and fold their files up."""
    for fmt in fmts:
        release = getattr(fmt.archive, "release", None)
        if release is not None:
            release()


def _cluster(
    registry: Any, fmts: list[_Format], client: Any, scheduler: str | None, real_in: str, real_out: str
) -> Cluster:
    from ..version import __version__
    from .cluster import connect, describe

    expected = {"piconv": __version__, "formats": {f.name: describe(registry.get(f.name)) for f in fmts}}
    return connect(client, scheduler, expected, real_in, real_out)


def _close(cluster: Cluster | None) -> None:
    if cluster is not None:
        cluster.close()


DISK_ERRORS = frozenset({"ENOSPC", "EDQUOT", "EROFS"})
"""Write errors that are the output directory's, not one file's: the run stops on them."""


def _disk_failure(result: dict[str, Any], outdir: str) -> str | None:
    for err in result["errors"].values():
        if err.get("errno") in DISK_ERRORS:
            return f"{outdir}: cannot write: {err['message']}"
    return None


def _plan(
    sources: list[Source],
    manifest: Manifest,
    fmts: list[_Format],
    real_in: str,
    outdir: str,
    force: bool,
    validate: bool,
    recover_glued: bool,
    version: str,
    timeout: float | None = None,
    filters: tuple[tuple[str, Mapping[str, Any]], ...] = (),
    archived: Mapping[str, Mapping[str, str | None]] | None = None,
    here: bool = False,
    overwrite: bool = False,
    present: Collection[str] | None = None,
    name_of: Callable[[str], str] = str,
    watched: frozenset[str] = frozenset(),
) -> tuple[list[tuple[Task, Source]], int, list[Refused]]:
    """Which files need work, and for which formats. Cheap by design: a rerun with
    nothing changed costs a ``stat`` of each input and each recorded output. ``here``:
    the tasks run on this machine, and put their sessions into the archives themselves.
    ``present``: every input found, selected or not. What the manifest records as written
    for an input no longer there is piconv's to replace for whichever input takes that
    name (a renamed session's); one still there keeps its files, even when it loses its
    output name to another (:func:`_claim_names`): that one is refused until the two
    differ (its output would replace the other's, which its record would still name)."""
    tasks: list[tuple[Task, Source]] = []
    skipped = 0
    unsafe: list[Refused] = []
    guard = input_guard(real_in, outdir)
    reserved = _reserved(fmts)
    planned: list[tuple[Source, dict[str, FormatSpec]]] = []
    for src in sources:
        live = src.rel in watched
        try:
            specs = {
                f.name: FormatSpec(
                    f.name, output_rel(name_of(src.rel), f.extension, f.tag, reserved), f.options_for(live)
                )
                if f.archive is None
                else FormatSpec(f.name, f.archive.file_name, f.options_for(live), archive=True, here=here)
                for f in fmts
            }
            if guard is not None:
                # By name only (no stat: a rerun stays cheap); the worker checks the
                # resolved directory again before it writes.
                for spec in specs.values():
                    full = os.path.join(outdir, *spec.rel_out.split("/"))
                    if full.startswith(guard.rstrip(os.sep) + os.sep):
                        raise OutputInInput(f"{spec.rel_out!r} would be written inside the input directory")
        except UnsafePath as exc:
            unsafe.append(Refused(src.rel, exc.code, str(exc)))
            continue
        planned.append((src, specs))
    owners = _claim_names(planned, fmts, unsafe)
    left_behind = frozenset(
        rel_out
        for rel, rec in manifest.records.items()
        if present is not None and rel not in present
        for rel_out in output_paths(rec)
    )
    for src, specs in planned:
        if src.rel not in owners:
            continue
        rec = None if force else manifest.get(src.rel)
        current = [
            f.name
            for f in fmts
            if rec is not None
            and _output_current(rec, f, specs[f.name], outdir, version, src.rel in watched)
            and (
                f.archive is None
                or (archived or {}).get(f.name, {}).get(name_of(src.rel), "") == rec.get("sha256")
            )
        ]
        same_stat = rec is not None and rec.get("size") == src.size and rec.get("mtime_ns") == src.mtime_ns
        if same_stat and len(current) == len(fmts):
            skipped += 1
            continue
        if rec is not None and not same_stat and len(current) == len(fmts) and rec.get("sha256"):
            # Touched or copied but maybe not changed: the worker hashes it and only
            # converts if the content differs.
            wanted = tuple(specs.values())
            check: str | None = rec["sha256"]
        else:
            wanted = tuple(specs[f.name] for f in fmts if not (same_stat and f.name in current))
            check = None
        task = Task(
            src.rel,
            src.path,
            outdir,
            wanted,
            validate,
            recover_glued,
            check,
            real_in,
            src.open_rel or src.rel,
            timeout or None,
            filters,
            output_paths(manifest.get(src.rel)) | left_behind,
            overwrite,
            tuple(output_links(manifest.get(src.rel)).items())
            if here and any(s.archive for s in wanted)
            else (),
            name_of(src.rel),
        )
        tasks.append((task, src))
    return tasks, skipped, unsafe


def _reserved(fmts: list[_Format]) -> frozenset[str]:
    """The names a session's output never takes at the top of OUTDIR: the run's own files
    and the pages its formats declare (a session ``index.jsonl`` goes to ``index.session.html``)."""
    pages = {f.index.file_name for f in fmts if f.index is not None}
    return RESERVED_TOP_LEVEL | {name for name in pages if isinstance(name, str)}


def _claim_names(
    planned: list[tuple[Source, dict[str, FormatSpec]]], fmts: list[_Format], refused: list[Refused]
) -> set[str]:
    """The inputs whose output names are their own. Two inputs can map to one name
    (``index.jsonl`` and ``index.session.jsonl`` both to ``index.session.html``; ``a.jsonl``'s
    first leaf and ``a.leaf-1.jsonl`` both to ``a.leaf-1.json``): the first in path order
    keeps it, the other is refused (``bulk:name-collision``) rather than overwriting it
    unseen. Decided from names alone, so it is the same on every run."""
    per_leaf = {f.name for f in fmts if f.per_leaf}
    claimed: dict[str, str] = {}
    for src, specs in planned:
        for name, spec in specs.items():
            if spec.archive:
                continue  # one file for every session
            claimed.setdefault(spec.rel_out, src.rel)
            if name in per_leaf:
                claimed.setdefault("leaf:" + spec.rel_out, src.rel)
    owners: set[str] = set()
    for src, specs in planned:
        other = None
        for spec in specs.values():
            if spec.archive:
                continue
            owner = claimed[spec.rel_out]
            other = other or (owner if owner != src.rel else _leaf_owner(spec.rel_out, claimed, src.rel))
        if other is None:
            owners.add(src.rel)
        else:
            refused.append(
                Refused(
                    src.rel,
                    "bulk:name-collision",
                    f"its outputs would take the names of {other}'s; rename one",
                )
            )
    return owners


def _leaf_owner(rel_out: str, claimed: dict[str, str], me: str) -> str | None:
    """The input of a per-leaf format whose numbered outputs include ``rel_out``, if not ``me``."""
    head, _, name = rel_out.rpartition("/")
    stem, _, ext = name.rpartition(".")
    base, sep, number = stem.rpartition(".leaf-")
    if not (sep and number.isdigit() and base):
        return None
    family = f"{head}/{base}.{ext}" if head else f"{base}.{ext}"
    owner = claimed.get("leaf:" + family)
    if owner is None or owner == me or leaf_rel(family, int(number)) != rel_out:
        return None
    return owner


def _output_current(
    rec: dict[str, Any], fmt: _Format, spec: FormatSpec, outdir: str, version: str, watched: bool = False
) -> bool:
    out = (rec.get("outputs") or {}).get(fmt.name)
    identity = fmt.identity_for(watched)
    meta = rec.get("meta")
    return (
        isinstance(out, dict)
        and rec.get("piconv") == version
        # the facts of an earlier piconv lack what links a fork to its parent: noted again
        and isinstance(meta, dict)
        and "counted" in meta
        and out.get("path") == spec.rel_out
        and all(out.get(k) == v for k, v in identity.items())
        # an output made through filters is not current for a run that asks for none
        and (out.get("filters") is None or "filters" in identity)
        and all(
            plain_file(os.path.join(outdir, *rel.split("/"))) for rel in out.get("leaves", [spec.rel_out])
        )
    )


def _record(
    result: dict[str, Any],
    manifest: Manifest,
    fmts: list[_Format],
    summary: Summary,
    version: str,
    header: Header | None = None,
    watched: bool = False,
) -> None:
    rel = result["input"]
    old = manifest.get(rel) or {}
    seen = {"header": header.to_json()} if header is not None else {}
    if result["status"] == "unchanged":
        summary.unchanged_content += 1
        manifest.append({**old, "size": result["size"], "mtime_ns": result["mtime_ns"], **seen})
        return
    identities = {f.name: f.identity_for(watched) for f in fmts}
    outputs: dict[str, Any] = {}
    if old.get("sha256") == result.get("sha256") and old.get("piconv") == version:
        # Same content: outputs of formats not redone this time are still valid.
        outputs.update(old.get("outputs") or {})
    leaf_outputs = result.get("leaf_outputs") or {}
    for name, path in result["outputs"].items():
        outputs[name] = {"path": path, **identities[name]}
        if name in leaf_outputs:
            outputs[name]["leaves"] = leaf_outputs[name]
    for name in result["errors"]:
        outputs.pop(name, None)
    record = {
        "input": rel,
        "size": result.get("size"),
        "mtime_ns": result.get("mtime_ns"),
        "sha256": result.get("sha256"),
        "piconv": version,
        "status": result["status"],
        "outputs": dict(sorted(outputs.items())),
        # every file piconv has written for this input, current or not: the next run
        # replaces them freely, whatever this one failed at or was not asked for
        "written": sorted(
            output_paths(old) | set(result.get("written") or ()) | output_paths({"outputs": outputs})
        ),
        "problems": result.get("problems") or {},
        "meta": result.get("meta") or old.get("meta"),
        **seen,
    }
    if result.get("filtered") is not None:
        record["filtered"] = result["filtered"]  # what the filters removed, by code
    if result.get("reader") or old.get("reader"):
        record["reader"] = result.get("reader") or old.get("reader")  # the input format detected
    if result["errors"]:
        record["errors"] = result["errors"]
        summary.add_failure(rel, result["errors"])
    else:
        summary.converted += 1
        summary.bytes_converted += result.get("size") or 0
    summary.problems.update(result.get("problems") or {})
    manifest.append(record)


def _header_redactor(filters: Sequence[tuple[str, Mapping[str, Any]]]) -> Callable[[Header], Header] | None:
    """With the redaction filter: a header as redaction leaves it (its working directory and
    the path it names, the home directory they lie in as ``~``), so nothing the manifest
    keeps of a session names what redaction removed from its outputs; else None."""
    options = _redact_options(filters)
    if options is _NONE:
        return None
    from ..redaction.api import name_redactor

    by_cwd: dict[str | None, Callable[[str], str]] = {}

    def redacted(header: Header) -> Header:
        if header.cwd not in by_cwd:
            by_cwd[header.cwd] = name_redactor(options, [header.cwd] if header.cwd else [])
        redact = by_cwd[header.cwd]
        return Header(
            header.id,
            redact(header.cwd) if header.cwd else None,
            header.timestamp,
            redact(header.parent_session) if header.parent_session else None,
        )

    return redacted


def _headers(
    sources: list[Source],
    manifest: Manifest,
    root: str,
    skipped: list[Skipped],
    refused: list[Refused],
    redact: Callable[[Header], Header] | None = None,
) -> tuple[list[Source], dict[str, Header]]:
    """The sources that are sessions, and each one's header: the one the manifest
    recorded while the file is as it was then (a rerun reads no file), else read
    (:func:`.sniff.sniff`). A file that is not a session joins ``skipped``; one that
    cannot be read, ``refused``. ``redact``: what a header becomes (with ``--redact``)."""
    sessions: list[Source] = []
    headers: dict[str, Header] = {}
    for src in sources:
        rec = manifest.get(src.rel)
        header = None
        if rec is not None and rec.get("size") == src.size and rec.get("mtime_ns") == src.mtime_ns:
            header = Header.from_json(rec.get("header"))
        if header is None:
            found = sniff(root, src)
            if isinstance(found, Skipped):
                skipped.append(found)
                continue
            if isinstance(found, Refused):
                refused.append(found)
                continue
            header = redact(found) if redact is not None else found
            if rec is not None and rec.get("size") == src.size and rec.get("mtime_ns") == src.mtime_ns:
                manifest.append({**rec, "header": header.to_json()})  # read once: kept for the next run
        elif redact is not None:
            header = redact(header)  # kept by a run without redaction
        headers[src.rel] = header
        sessions.append(src)
    skipped.sort(key=lambda item: item.rel)
    return sessions, headers


def _write_indexes(
    manifest: Manifest,
    fmts: list[_Format],
    outdir: str,
    overwrite: bool,
    notes: list[str],
    links: Mapping[str, Link] | None = None,
) -> list[str]:
    from .index import IndexNotWritten, write_index

    written = []
    for fmt in fmts:
        if fmt.index is not None:
            try:
                written.append(
                    write_index(fmt.index, fmt.name, manifest.records.values(), outdir, overwrite, links)
                )
            except IndexNotWritten as exc:
                notes.append(str(exc))
    return written
