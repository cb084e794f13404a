"""The per-file task: read one session once, write every requested format.

Runs in a pool process or on a Dask worker, so everything it takes and returns is plain
picklable data, and it never raises: whatever goes wrong with one session is returned as
that session's failure, so the batch goes on.

Each output is rendered into memory, validated, written to a temporary name beside its
final name and renamed into place, by the same two steps as a single conversion's output
(:func:`piconv.output.temporary` and :func:`piconv.output.commit`). A reader of OUTDIR
therefore sees either the previous complete output or the new complete one; a run killed
mid-write leaves only a ``.piconv-HEX.tmp`` file, which the next run deletes
(:func:`clean_temps`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import os
import re
import stat
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..output import TEMP_NAME, commit, discard, folders_kept_out_of, plain_file, temporary
from .discover import (
    NamedBytes,
    NotASession,
    NotOurs,
    UnsafePath,
    input_guard,
    leaf_rel,
    open_session,
    safe_join,
)
from .timelimit import TimedOut, time_limit

LEGACY_TMP = re.compile(r"^\..+\.[0-9]+-[0-9a-f]{8}\.piconv-tmp$")
"""The temporary names of earlier versions, still cleaned up after a killed run of one."""


@dataclass(frozen=True, slots=True)
class FormatSpec:
    """One format to write: its registry name, the output's path below OUTDIR and the
    options its ``write`` gets (``output_path`` is added by the worker)."""

    name: str
    rel_out: str
    options: dict[str, Any] = field(default_factory=dict)
    archive: bool = False
    """The format is written as one file for the whole run (``Converter.archive``)."""
    here: bool = False
    """With ``archive``: the worker puts the session into the archive itself (the local
    executor: the archive is on this machine); else it makes the session's payload and
    the parent process puts it in (a Dask worker may be elsewhere)."""


@dataclass(frozen=True, slots=True)
class Task:
    rel: str
    path: str
    outdir: str
    formats: tuple[FormatSpec, ...]
    validate: bool = True
    recover_glued: bool = False
    unchanged_if_sha256: str | None = None
    """When set, the input only looked changed (size or mtime): if its content still
    hashes to this, nothing is converted and the result says ``unchanged``."""
    root: str = ""
    """The input root (resolved); with ``open_rel`` what is opened, link by link checked.
    Empty: ``path`` is opened as it is (a caller of :func:`run_task` of its own)."""
    open_rel: str = ""
    timeout: float | None = None
    """Seconds this task may take (:mod:`.timelimit`); None: no limit."""
    filters: tuple[tuple[str, Any], ...] = ()
    """Filters (``(name, options)``) applied to the session before any format."""
    ours: frozenset[str] = frozenset()
    """Output paths (below OUTDIR) the manifest records piconv wrote for this input, in
    this run's formats or earlier ones: replaced freely. Any other file already at an
    output's place is someone else's (:func:`claim`)."""
    overwrite: bool = False
    """``--overwrite``: replace what is at an output's place whoever wrote it."""
    links: tuple[tuple[str, str], ...] = ()
    """The session's outputs (format name, path below OUTDIR) of earlier runs, which an
    archive records beside the session (the html page a search hit links to)."""
    key: str = ""
    """The session's key in an archive: ``rel``, or the name redaction leaves of it."""


def run_task(task: Task) -> dict[str, Any]:
    """Convert one session; returns the manifest record fields for it."""
    started = time.perf_counter()
    result: dict[str, Any] = {
        "input": task.rel,
        "key": task.key or task.rel,
        "outputs": {},
        "errors": {},
        "problems": {},
        "written": [],
    }
    try:
        with time_limit(task.timeout):
            _run(task, result)
    except TimedOut:
        result["errors"]["*"] = {
            "code": "bulk:timeout",
            "message": f"not done within {task.timeout:g} s (--timeout); the outputs not yet written are missing",
        }
    except Exception as exc:  # the batch must go on whatever one file does
        result["errors"]["*"] = {"code": "bulk:internal-error", "message": f"{type(exc).__name__}: {exc}"}
    result["status"] = "failed" if result["errors"] else result.get("status", "ok")
    result["seconds"] = round(time.perf_counter() - started, 6)
    return result


def _run(task: Task, result: dict[str, Any]) -> None:
    from .. import api
    from ..errors import PiconvError, ValidationFailed

    try:
        with _open_input(task) as fh:
            st = os.fstat(fh.fileno())  # before reading: a file growing meanwhile looks changed next run
            data = fh.read()
    except NotASession as exc:
        result["errors"]["load"] = {"code": "bulk:not-a-file", "message": exc.strerror or str(exc)}
        return
    except OSError as exc:
        result["errors"]["load"] = {
            "code": "bulk:unreadable",
            "message": f"cannot read: {exc.strerror or exc}",
        }
        return
    result["size"] = st.st_size
    result["mtime_ns"] = st.st_mtime_ns
    result["sha256"] = digest = hashlib.sha256(data).hexdigest()
    if task.unchanged_if_sha256 is not None and digest == task.unchanged_if_sha256:
        result["status"] = "unchanged"
        return
    # what the formats need of how the lines were spelled ("bytes" serves "layout" too)
    spelled = {api.get_format(spec.name).source_lines for spec in task.formats} - {None}
    keep = "bytes" if "bytes" in spelled else next(iter(spelled), None)
    try:
        doc, reader = api.load_detected(
            NamedBytes(data, task.path), task.recover_glued, None, keep
        )  # the reader detected
        result["reader"] = reader.name
    except PiconvError as exc:
        result["errors"]["load"] = {"code": "bulk:not-a-session", "message": str(exc)}
        return
    del data  # the document holds what is needed; free the raw bytes before rendering
    result["problems"] = dict(Counter(issue.code for issue in doc.issues))
    if task.filters:
        # once for every format, and before the metadata the index shows
        filtered = api.Report(format="")
        doc = api.apply_filters(doc, task.filters, filtered)
        result["filtered"] = {code: item.count for code, item in sorted(filtered.losses.items())}
    result["meta"] = session_meta(doc)
    from ..registry import get_registry
    from ..report import Report

    registry = get_registry()
    guard = input_guard(task.root, os.path.realpath(task.outdir)) if task.root else None
    # an archive records the session's other outputs: they are written first
    for spec in sorted(task.formats, key=lambda spec: spec.archive):
        try:
            if spec.archive:
                archive = registry.get(spec.name).archive
                report = Report(spec.name, doc.session.source_path)
                if spec.here and hasattr(archive, "put"):
                    final = safe_join(task.outdir, spec.rel_out, guard)
                    _put(archive, final, task, doc, spec, report, result)
                else:
                    payload = archive.payload(doc, spec.options, report)
                    result.setdefault("payloads", {})[spec.name] = payload
                    result["outputs"][spec.name] = spec.rel_out
                continue
            if registry.get(spec.name).per_leaf:
                # one output per leaf, numbered in document order
                targets = [(leaf_rel(spec.rel_out, n), leaf.id) for n, leaf in enumerate(doc.leaves(), 1)]
            else:
                targets = [(spec.rel_out, spec.options.get("leaf"))]
            for rel_out, leaf in targets:
                final = safe_join(task.outdir, rel_out, guard)
                # Made before converting, as a single conversion's -o needs it: a format
                # writes its files beside its output (Markdown's images) while converting.
                output_directory(final, task.outdir, guard)
                buffer = io.BytesIO()
                options = {**spec.options, "output_path": final, "leaf": leaf}
                with folders_kept_out_of(guard):  # a format's files beside its output too
                    api.convert(doc, spec.name, buffer, options, validate=task.validate)
                if not task.overwrite:
                    claim(final, rel_out, buffer.getbuffer(), recorded=rel_out in task.ours)
                write_atomic(final, buffer.getbuffer(), task.outdir, guard)
                # recorded as it lands: a later failure (another leaf, --timeout) must not
                # leave a file of piconv's that the next run takes for someone else's
                result["written"].append(rel_out)
                del buffer
            if len(targets) != 1 or targets[0][0] != spec.rel_out:
                result.setdefault("leaf_outputs", {})[spec.name] = [rel for rel, _leaf in targets]
        except ValidationFailed as exc:
            result["errors"][spec.name] = {"code": "bulk:validation-failed", "message": str(exc)}
        except UnsafePath as exc:
            result["errors"][spec.name] = {"code": exc.code, "message": str(exc)}
        except PiconvError as exc:
            result["errors"][spec.name] = {"code": "bulk:convert-error", "message": str(exc)}
        except OSError as exc:
            result["errors"][spec.name] = {"code": "bulk:write-error", "message": f"{exc.strerror or exc}"}
            if exc.errno in errno.errorcode:
                # the runner stops the whole run on a full or read-only disk
                result["errors"][spec.name]["errno"] = errno.errorcode[exc.errno]
        except Exception as exc:  # a converter bug must cost one output, not the batch
            result["errors"][spec.name] = {
                "code": "bulk:converter-crashed",
                "message": f"{type(exc).__name__}: {exc}",
            }
        else:
            result["outputs"][spec.name] = spec.rel_out


def _put(
    archive: Any, path: str, task: Task, doc: Any, spec: FormatSpec, report: Any, result: dict[str, Any]
) -> None:
    """Put the session into the archive at ``path`` from this process. A failure costs
    that format of this session (``bulk:archive-error``), as it would in the parent."""
    links = {**dict(task.links), **result["outputs"]}
    try:
        archive.put(path, task.key or task.rel, doc, spec.options, report, result["sha256"], links)
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"
        result["errors"][spec.name] = {"code": "bulk:archive-error", "message": message}
    else:
        result["outputs"][spec.name] = spec.rel_out


def _open_input(task: Task) -> io.BufferedReader:
    if task.root:
        return open_session(task.root, task.open_rel or task.rel)  # type: ignore[return-value]
    return open(task.path, "rb")


def claim(final: str, rel_out: str, data: bytes | memoryview, *, recorded: bool = False) -> None:
    """Raise :class:`NotOurs` unless an output with ``data`` may take the place ``final``.
    A place the manifest records as piconv's (``recorded``) may hold a regular file, which
    is replaced; any other must be free, or hold exactly ``data`` (what a run stopped
    before its manifest line was written left there). A link, a pipe or a directory is
    never replaced: it was put there since."""
    if recorded:
        if plain_file(final) or not os.path.lexists(final):
            return
        raise NotOurs(
            f"{rel_out} is not a plain file (a link, a pipe or a directory) where piconv wrote one: "
            "left as it is (move it away, or use --overwrite to replace it)"
        )
    there, held = _occupant(final, len(data))
    if not there or held == data:
        return
    raise NotOurs(
        f"{rel_out} is already in the output directory and piconv did not write it: "
        "left as it is (move it away, or use --overwrite to replace it)"
    )


def write_own(
    path: str, data: bytes, outdir: str, ours: Callable[[bytes], bool], replace_any: bool = False
) -> bool:
    """Write a file of the run's own (an index, a file beside an archive) at ``path``
    unless it already holds ``data``; whether it is there now. What is at that place is
    replaced only when ``ours(its bytes)`` says piconv wrote it, or ``replace_any``
    (``--overwrite``); anything but a regular file is never read (a FIFO would block)."""
    there, held = _occupant(path)
    if held == data:
        return True
    if there and not replace_any and (held is None or not ours(held)):
        return False
    write_atomic(path, data, outdir)
    return True


def _occupant(path: str, size: int | None = None) -> tuple[bool, bytes | None]:
    """Whether something is at ``path``, and its bytes when it is a regular file (of
    ``size`` bytes, if given: a file of another size is not read). Nothing else is ever
    read: a FIFO would block."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False, None
    if not stat.S_ISREG(info.st_mode) or (size is not None and info.st_size != size):
        return True, None
    with open(path, "rb") as fh:
        return True, fh.read()


def output_directory(final: str, outdir: str, guard: str | None = None) -> str:
    """The directory ``final`` goes in, made if missing and checked again once made
    (:func:`safe_join`): a symlink planted meanwhile cannot send what is written there
    outside OUTDIR or into the input tree (``guard``). Returns it."""
    directory = os.path.dirname(final)
    os.makedirs(directory, exist_ok=True)
    safe_join(outdir, os.path.relpath(final, os.path.realpath(outdir)).replace(os.sep, "/"), guard)
    return directory


def write_atomic(final: str, data: bytes | memoryview, outdir: str, guard: str | None = None) -> None:
    """Write ``data`` to a temporary file beside ``final`` and rename it over ``final``.
    The directory is re-checked after it is created, so a symlink planted between the
    path check and the write still cannot redirect the output outside OUTDIR or into
    the input tree (``guard``). An existing regular file keeps its mode."""
    directory = output_directory(final, outdir, guard)
    try:
        info = os.lstat(final)
        mode = stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None
    except FileNotFoundError:
        mode = None
    tmp, name = temporary(directory)
    try:
        tmp.write(data)
        commit(tmp, name, final, mode)
    except BaseException:
        discard(tmp, name)
        raise


def clean_temps(outdir: str) -> int:
    """Delete the temporary files a killed run left in OUTDIR (only names piconv makes:
    ``.piconv-HEX.tmp``, and the older ``.NAME.PID-HEX.piconv-tmp``); returns how many."""
    removed = 0
    for dirpath, _dirs, files in os.walk(outdir, followlinks=False):
        for name in files:
            if TEMP_NAME.match(name) or LEGACY_TMP.match(name):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(dirpath, name))
                    removed += 1
    return removed


# --------------------------------------------------------------------------- index facts


def session_meta(doc: Any) -> dict[str, Any]:
    """What the index shows about a session (:func:`piconv.facts.summary.session_facts`) and what
    links it to the session it came from (:func:`piconv.facts.lineage.lineage_facts`), computed
    while the document is in memory so the index never has to read a session again."""
    from ..facts.lineage import lineage_facts
    from ..facts.summary import activity_facts, session_facts

    return {**session_facts(doc), **lineage_facts(doc), **activity_facts(doc)}
