"""Bulk archival export: every session below a directory, in parallel, incrementally.

``piconv SESSIONS_DIR --to html -o ARCHIVE`` and :func:`run_bulk` from Python; see
docs/bulk.md. One module per job: :mod:`.discover` (what to convert, where outputs go),
:mod:`.headers` (each session's header, recalled or read), :mod:`.select` (``--since``,
``--until``, ``--project``), :mod:`.formats` (the run's formats and what makes an output
stale), :mod:`.plan` (what needs work, under which names), :mod:`.redactnames` (names
as ``--redact`` leaves them), :mod:`.manifest` (what was done), :mod:`.record` (a
result's record), :mod:`.worker` (the per-file task), :mod:`.executors` (where tasks
run), :mod:`.archive` (formats written as one file), :mod:`.progress`, :mod:`.summary`,
:mod:`.index`, and :mod:`.runner`, which runs them in order.

The names below are imported on first use, so a light module of the package
(:mod:`.select`, :mod:`.sniff`) does not pay for the runner.
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
