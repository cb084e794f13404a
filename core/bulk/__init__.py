"""Bulk archival export: every session below a directory, in parallel, incrementally.

``piconv SESSIONS_DIR --to html -o ARCHIVE`` and :func:`run_bulk` from Python; see
docs/bulk.md. One module per job: :mod:`.discover` (what to convert, where outputs go),
:mod:`.manifest` (what was done), :mod:`.worker` (the per-file task), :mod:`.executors`
(where tasks run), :mod:`.progress`, :mod:`.summary`, :mod:`.index`, :mod:`.runner`.
"""

from __future__ import annotations

from .runner import run_bulk
from .summary import Summary

__all__ = ["Summary", "run_bulk"]
