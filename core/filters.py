"""The filter stage: IR -> IR, between the reader and the converter.

A filter is registered through the ``register_filters`` hook (as a format is through
``register_converters``) and applied, in the order asked for, before any converter; it
never knows the output format. What it removed or changed goes into the conversion's
report (loss codes and ``notes``). The built-in ``redact`` filter is
:mod:`piconv.redaction`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .records import Frozen, frozen

if TYPE_CHECKING:
    from .ir import Document
    from .report import Report

FilterFunction = Callable[["Document", Mapping[str, Any], "Report"], "Document"]
"""``apply(document, options, report) -> document``: returns the filtered document (a new
one; the given one is never changed) and records what it did in ``report``."""


@frozen
class Filter(Frozen):
    """An IR -> IR filter: ``name`` (what ``piconv.apply_filters`` and a bulk run take),
    a one-line ``summary``, the ``apply`` function. ``plugin`` / ``distribution`` /
    ``version`` are filled in by the registry."""

    name: str
    summary: str
    apply: FilterFunction
    plugin: str = ""
    distribution: str = ""
    version: str = ""


FilterStep = tuple[str, Mapping[str, Any]]
"""One filter to apply: its name and its options."""


def run_filters(document: Document, steps: Sequence[FilterStep], report: Report) -> Document:
    """``document`` through each step in order; what each did is recorded in ``report``."""
    from .registry import get_registry

    registry = get_registry()
    read_from = document.input_path or document.session.source_path
    for name, options in steps:
        document = registry.get_filter(name).apply(document, options, report)
        if read_from and document.input_path is None and document.session.source_path != read_from:
            # a filter may rewrite the session's path (redaction writes ``~`` for the home
            # directory) without knowing the file it came from: the document keeps it, and
            # with it what keeps an output off its input
            object.__setattr__(document, "input_path", read_from)
    return document
