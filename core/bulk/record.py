"""What a run keeps of each task's result: its manifest record and its share of the summary.

The record says what the next run may leave as it is (each output with the identity it
was written with, :mod:`.formats`) and what it may replace (every file piconv wrote for
the input). A result that failed on a full or read-only disk stops the run
(:func:`disk_failure`): every later file would fail the same way.
"""

from __future__ import annotations

from typing import Any

from .formats import RunFormat
from .manifest import Manifest, output_paths
from .sniff import Header
from .summary import Summary

DISK_ERRORS = frozenset({"ENOSPC", "EDQUOT", "EROFS"})
"""Write errors that are the output directory's, not one file's: the run stops on them."""


def record_result(
    result: dict[str, Any],
    manifest: Manifest,
    fmts: list[RunFormat],
    summary: Summary,
    version: str,
    header: Header | None,
    watched: bool,
) -> None:
    """Append the manifest record of ``result`` (``header``: the session's, kept for the
    next run; ``watched``: written for ``piconv watch``) and count it in ``summary``."""
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


def disk_failure(result: dict[str, Any], outdir: str) -> str | None:
    """Why the run must stop, when ``result`` failed on a full or read-only disk; else None."""
    for err in result["errors"].values():
        if err.get("errno") in DISK_ERRORS:
            return f"{outdir}: cannot write: {err['message']}"
    return None
