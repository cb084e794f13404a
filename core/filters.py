"""The filter stage: IR -> IR, between the reader and the converter.

A filter is registered through the ``register_filters`` hook (as a format is through
``register_converters``) and applied, in the order asked for, before any converter; it
never knows the output format. What it removed or changed goes into the conversion's
report (loss codes and ``notes``). The built-in ``redact`` filter is
:mod:`piconv.redaction`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
