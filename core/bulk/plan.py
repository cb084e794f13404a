"""Which sessions a run converts, into which formats, under which names.

Cheap by design: a rerun with nothing changed costs a ``stat`` of each input and each
recorded output (:func:`.formats.output_current`). Each input's outputs are named from
its path alone (:func:`.discover.output_rel`), so the names are the same on every run;
two inputs whose outputs would take one name are told apart here, before anything is
written (:func:`_claim_names`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from .discover import (
    RESERVED_TOP_LEVEL,
    OutputInInput,
    Refused,
    Source,
    UnsafePath,
    input_guard,
    leaf_rel,
    output_rel,
)
from .formats import RunFormat, output_current
from .manifest import Manifest, output_links, output_paths
from .worker import FormatSpec, Task


@dataclass(frozen=True, slots=True)
class Plan:
    tasks: list[tuple[Task, Source]]
    """What to convert: each task with the session it reads."""
    up_to_date: int
    """Sessions whose every output is current: nothing to do."""
    refused: list[Refused]
    """Sessions that get no task: an unsafe output name, or one another session took."""


def plan(
    sources: list[Source],
    manifest: Manifest,
    fmts: list[RunFormat],
    real_in: str,
    outdir: str,
    *,
    version: str,
    force: bool,
    validate: bool,
    recover_glued: bool,
    timeout: float | None,
    filters: tuple[tuple[str, Mapping[str, Any]], ...],
    archived: Mapping[str, Mapping[str, str | None]],
    here: bool,
    overwrite: bool,
    present: Collection[str],
    name_of: Callable[[str], str],
    watched: frozenset[str],
) -> Plan:
    """Which files need work, and for which formats. ``archived``: each archive format's
    sessions (key -> the content hash it holds). ``here``: the tasks run on this machine,
    and put their sessions into the archives themselves. ``present``: every input found,
    selected or not. What the manifest records as written for an input no longer there is
    piconv's to replace for whichever input takes that name (a renamed session's); one
    still there keeps its files, even when it loses its output name to another
    (:func:`_claim_names`): that one is refused until the two differ (its output would
    replace the other's, which its record would still name)."""
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
        if rel not in present
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
            and output_current(rec, f, specs[f.name].rel_out, outdir, version, src.rel in watched)
            and (f.archive is None or archived.get(f.name, {}).get(name_of(src.rel), "") == rec.get("sha256"))
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
    return Plan(tasks, skipped, unsafe)


def _reserved(fmts: list[RunFormat]) -> frozenset[str]:
    """The names a session's output never takes at the top of OUTDIR: the run's own files
    and the pages its formats declare (a session ``index.jsonl`` goes to ``index.session.html``)."""
    pages = {f.index.file_name for f in fmts if f.index is not None}
    return RESERVED_TOP_LEVEL | {name for name in pages if isinstance(name, str)}


def _claim_names(
    planned: list[tuple[Source, dict[str, FormatSpec]]], fmts: list[RunFormat], refused: list[Refused]
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
