"""The built-in ``detail`` filter, registered as a plugin's would be."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..filters import Filter
from ..hookspecs import hookimpl

if TYPE_CHECKING:
    from ..ir import Document
    from ..report import Report


def apply_detail(document: Document, options: Mapping[str, Any], report: Report) -> Document:
    """``options["level"]``: ``full``, ``calls``, ``conversation`` or ``prompts``."""
    from .levels import apply_detail as run

    return run(document, options, report)


@hookimpl
def register_filters(register: Any) -> None:
    register(
        Filter(
            "detail",
            "keep less: full, calls (no tool output), conversation, prompts; see docs/sharing.md",
            apply_detail,
        )
    )
