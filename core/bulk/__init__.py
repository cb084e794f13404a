"""Bulk archival export: every session below a directory, in parallel, incrementally.

``piconv SESSIONS_DIR --to html -o ARCHIVE`` and :func:`run_bulk` from Python; see
docs/bulk.md. One module per job: :mod:`.discover` (what to convert, where outputs go),
:mod:`.select` (``--since``, ``--until``, ``--project``), :mod:`.manifest` (what was done),
:mod:`.worker` (the per-file task), :mod:`.executors` (where tasks run), :mod:`.archive`
(formats written as one file), :mod:`.progress`, :mod:`.summary`, :mod:`.index`,
:mod:`.runner`.

The names below are imported on first use, so a light module of the package
(:mod:`.shown`, :mod:`.select`) does not pay for the runner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["Summary", "run_bulk"]

if TYPE_CHECKING:
    from .runner import run_bulk
    from .summary import Summary


def __getattr__(name: str) -> Any:
    if name == "run_bulk":
        from .runner import run_bulk

        return run_bulk
    if name == "Summary":
        from .summary import Summary

        return Summary
    raise AttributeError(f"module 'piconv.bulk' has no attribute {name!r}")
